"""The pip line that installs one of the package's optional extras, in one spelling.

The core install runs the engine and the Gymnasium envs; the adapters for other frameworks need
an extra (``[train]``: torch and stable-baselines3; ``[cuda]``: numba-cuda), and when one is
missing the error names the line that installs it. The commands (:mod:`agents.extras`) print the
same line.
"""

from __future__ import annotations

__all__ = ["install_line", "missing_extra"]


def install_line(extra: str) -> str:
    """The pip command that installs ``extra``."""
    return f'pip install "forty-thieves-env[{extra}]"'


def missing_extra(module: str, needs: str, extra: str) -> ImportError:
    """The error module ``module`` raises on import when ``needs``, which ``extra`` installs, is
    missing (raise it ``from`` the failed import)."""
    return ImportError(f"{module} needs {needs}: install the extra with `{install_line(extra)}`")
