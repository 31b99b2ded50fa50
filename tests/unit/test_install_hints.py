"""Every install hint names the PyPI package pyjms-jakarta (issue 35): "pyjms" on PyPI is an
unrelated package, so `pip install 'pyjms[spark]'` would install someone else's code."""

from __future__ import annotations

import re

from tests.conftest import ROOT

# pip install pyjms, pip install 'pyjms[otel]', install 'pyjms[spark]' there, the ``pyjms[otel]`` extra
WRONG = re.compile(r"""(?:install\s+['"`]?pyjms(?![-\w])|(?<![-\w/.])pyjms\[)""")


def test_no_hint_names_the_wrong_package() -> None:
    files = [
        p
        for pattern in (
            "pyjms/**/*.py",
            "examples/*.py",
            "docs/*.md",
            "bench/*.py",
            "*.md",
            "Makefile",
            "setup.py",
        )
        for p in ROOT.glob(pattern)
    ]
    assert len(files) > 50
    wrong = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if WRONG.search(line)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_pattern_finds_what_it_must() -> None:
    for line in (
        "pip install 'pyjms[spark]'",
        "pip install pyjms",
        "the ``pyjms[otel]`` extra",
        "`pyjms[otel]`",
    ):
        assert WRONG.search(line), line
    for line in (
        "pip install 'pyjms-jakarta[spark]'",
        "pip install pyjms-jakarta",
        "pyjms.spark",
        "import pyjms",
    ):
        assert not WRONG.search(line), line
