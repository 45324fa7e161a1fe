"""The product's rules, with no I/O of their own.

Where a module goes: a pure helper (functions and frozen types over data: ranking, the
answer-mode decision, citations, the version lifecycle, metrics) is a module here, named
after what it decides; ``ports.py`` names what the outside world must offer; a class that
holds ports and runs a step through them (search, chat, evaluation, promotion) is a
service in ``core/services/``. Nothing in ``core/`` imports ``core/services``, providers,
ingest or the API.
"""
