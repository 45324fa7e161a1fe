"""``store.sqlite.blas_threads`` caps NumPy's BLAS threads when the store is built."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO


def _blas_threads_after_build_store(blas_threads: str) -> str:
    """Run in a fresh process: the limit is process-wide, so it must not leak into the test session."""
    code = textwrap.dedent(f"""
        import numpy, tempfile
        from threadpoolctl import threadpool_info
        from backend.common.config import load_settings
        from backend.providers.registry import build_store
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(overrides={{"store": {{"sqlite": {{"path": tmp + "/s.sqlite",
                                                                        "blas_threads": {blas_threads}}}}}}}, env={{}})
            build_store(settings).close()
            print(sorted({{p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={"OPENBLAS_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_build_store_caps_blas_at_the_configured_threads() -> None:
    assert _blas_threads_after_build_store("1") == "[1]"


def test_null_leaves_the_library_default() -> None:
    assert _blas_threads_after_build_store("None") == "[2]"
