"""``rag oracle load-model`` and ``rag oracle parity``: in-database query embeddings (docs/ORACLE.md,
"In-database query embeddings").

``load-model`` exports the local model as one text-in / vector-out ONNX graph
(``onnx_text_model``), proves it offline against the local fp32 embedder on ``PROOF_TEXTS``
(refused below ``store.oracle.query_embedding.min_cosine`` unless ``--force``), then loads it
with ``DBMS_VECTOR.LOAD_ONNX_MODEL`` (``--output`` only writes the file). ``parity`` embeds a
version's golden questions on the database and with the embedder its stamp names, records the
figures, and exits 1 when the version is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from backend.cli.context import settings_from
from backend.common.config import REPO_ROOT, EmbeddingSettings, Settings
from backend.common.errors import ConfigError
from backend.core.model_stamp import split_stamp


def _oracle_only(ctx: click.Context, settings: Settings, command: str) -> None:
    if settings.store.backend != "oracle":
        click.echo(f"error: rag oracle {command} needs store.backend oracle; this profile uses "
                   f"'{settings.store.backend}'. Set store.backend: oracle with store.oracle.dsn and user, and the "
                   "password in RAG_STORE__ORACLE__PASSWORD.", err=True)
        ctx.exit(2)


def embedder_settings_for(stamp: str, embeddings: EmbeddingSettings) -> EmbeddingSettings:
    """Pure: the local embedder settings that reproduce a version's model stamp (runtime and
    quantization from the stamp). Refuses a stamp of another model than the configured local one."""
    model, tag = split_stamp(stamp)
    if embeddings.provider != "local" or model != embeddings.model:
        raise ConfigError(f"the version is stamped {stamp!r}; the parity check needs that model's local embedder "
                          f"(embeddings.provider local, embeddings.model {model!r})")
    runtime, _, precision = tag.partition("-")
    local = embeddings.local.model_copy(update={"runtime": runtime,
                                                "quantization": "none" if precision == "fp32" else precision})
    return embeddings.model_copy(update={"local": local})


def _text_model(settings: Settings) -> Any:
    from backend.providers.local.embedder import packaged_model_path
    from backend.providers.local.onnx_embedder import _max_seq_length
    from backend.providers.local.onnx_text_model import ensure_text_model

    emb = settings.embeddings
    model_dir = packaged_model_path(emb.model)
    cache = Path(emb.local.onnx_cache_dir).expanduser()
    cache = cache if cache.is_absolute() else REPO_ROOT / cache
    return ensure_text_model(model_dir, cache, _max_seq_length(model_dir, emb.local.max_seq_length))


def _open_connector(settings: Settings) -> Any:
    """The pool, through ``cli/oracle.py``'s ``open_connector`` (the group puts it in the context)."""
    return click.get_current_context().obj["open_connector"](settings.store.oracle)


@click.command("load-model")
@click.option("--name", default=None, help="Mining model name (default: store.oracle.query_embedding.model_name).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Only write the ONNX file here (for a DBA loading it from a directory object); no database.")
@click.option("--force", is_flag=True, help="Load even when the offline proof is below the parity floor.")
@click.pass_context
def load_model(ctx: click.Context, name: str | None, output: Path | None, force: bool) -> None:
    """Export the local model as a text-in / vector-out ONNX graph and load it into Oracle."""
    import numpy as np

    from backend.providers.local.embedder import make_local_embedder
    from backend.providers.local.onnx_text_model import PROOF_TEXTS, offline_parity, oracle_metadata, text_session
    from backend.providers.oracle_vs import query_model

    settings = settings_from(ctx)
    if output is None:
        _oracle_only(ctx, settings, "load-model")
    cfg = settings.store.oracle.query_embedding
    model = query_model.model_name(name or cfg.model_name)
    text_model = _text_model(settings)
    fp32 = make_local_embedder(embedder_settings_for(f"{settings.embeddings.model}@onnx-fp32", settings.embeddings))
    cosines = offline_parity(text_session(text_model.path), fp32, PROOF_TEXTS)
    worst = int(np.argmin(cosines))
    size_mb = text_model.path.stat().st_size / 1e6
    click.echo(f"exported {text_model.path} ({size_mb:.1f} MB, max_length {text_model.max_length}); offline proof on "
               f"{len(PROOF_TEXTS)} texts: cosine min {cosines.min():.6f} mean {cosines.mean():.6f} "
               f"(worst: {PROOF_TEXTS[worst][:40]!r})")
    if cosines.min() < cfg.min_cosine and not force:
        click.echo(f"error: the exported graph disagrees with the local model (cosine {cosines.min():.6f} < "
                   f"{cfg.min_cosine}); not loaded (--force loads it anyway; parity still gates each version)", err=True)
        ctx.exit(1)
    if output is not None:
        output.write_bytes(text_model.path.read_bytes())
        click.echo(f"wrote {output}; load it with DBMS_VECTOR.LOAD_ONNX_MODEL(directory, '{output.name}', "
                   f"'{model}', JSON('{__import__('json').dumps(oracle_metadata())}'))")
        return
    connector = _open_connector(settings)
    try:
        sha = query_model.load_model(connector, model, text_model.path.read_bytes(), oracle_metadata())
        loaded = query_model.loaded_model(connector, model)
    finally:
        connector.close()
    click.echo(f"loaded {model} (sha256 {sha[:16]}): {loaded[1] if loaded else '?'} / {loaded[2] if loaded else '?'}; "
               "earlier parity checks of this name no longer count: run `rag oracle parity` for each version to "
               "serve with store.oracle.query_embedding.enabled")


@click.command("parity")
@click.option("--version", "target", default=None, help="Version or alias to check (default: the alias's version).")
@click.option("--golden", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Golden set whose questions are compared (default: the domain's, else evaluation.golden_set).")
@click.option("--domain-key", default=None, help="Domain whose alias and golden set apply.")
@click.pass_context
def parity(ctx: click.Context, target: str | None, golden: Path | None, domain_key: str | None) -> None:
    """Compare VECTOR_EMBEDDING on the database with the version's own embedder on its golden
    questions; record the result. Exit 0 when it passes, 1 when the version is refused."""
    from backend.core.embedding_text import query_input
    from backend.core.golden import load_golden_set
    from backend.core.services.promotion import resolve_target
    from backend.providers.local.embedder import make_local_embedder
    from backend.common.errors import StoreError
    from backend.providers.oracle_vs import query_model
    from backend.runtime import open_stores

    settings = settings_from(ctx)
    _oracle_only(ctx, settings, "parity")
    cfg = settings.store.oracle.query_embedding
    where = resolve_target(settings, domain_key=domain_key, golden=golden)
    stores = open_stores(settings)
    try:
        name = target or where.alias
        version = stores.admin.get_version(stores.admin.resolve_alias(name) or name)
        profile = settings.embeddings.profiles.get(version.profile or "") or settings.embeddings.profile_for()
        texts = [query_input(q.query, profile) for q in load_golden_set(where.golden).queries]
        local = make_local_embedder(embedder_settings_for(version.model, settings.embeddings)).embed_queries(texts)
        connector = _open_connector(settings)
        try:
            sha = query_model.fingerprint(connector, cfg.model_name)
            if sha is None:
                raise StoreError(
                    f"{query_model.model_name(cfg.model_name)} has no fingerprint in {query_model.MODELS_TABLE}: "
                    "load it with `rag oracle load-model` (a check is tied to the graph it measured)")
            database = query_model.database_vectors(connector, cfg.model_name, texts)
            if query_model.fingerprint(connector, cfg.model_name) != sha:
                raise StoreError(f"{query_model.model_name(cfg.model_name)} was loaded again while it "
                                           "was checked: run `rag oracle parity` again")
            check = query_model.compare(version.name, query_model.model_name(cfg.model_name), version.model, texts,
                                        database, local, cfg.min_cosine, model_sha256=sha)
            query_model.record_check(connector, check)
        finally:
            connector.close()
    finally:
        stores.close()
    click.echo(check.summary())
    ctx.exit(0 if check.passed else 1)
