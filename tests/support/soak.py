"""``benchmarks/soak_gateway.py`` as a module, for the tests that drive a live ``serve`` with
its classes of requests (it is a script, not part of the package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

__all__ = ["load_soak"]

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "soak_gateway.py"


def load_soak() -> Any:
    """The soak module (loaded once; later calls return the same module)."""
    loaded = sys.modules.get("soak_gateway")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("soak_gateway", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak_gateway"] = module
    spec.loader.exec_module(module)
    return module
