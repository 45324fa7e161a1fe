"""Services: classes and steps that hold ports (stores, embedder, answer models) and run a
request or a job through them. Pure decisions they use live one level up in ``core/``."""
