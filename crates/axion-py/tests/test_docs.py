"""The Python snippets of the README and docs/python.md run as written."""

import re

import pytest

from conftest import REPOSITORY

SNIPPETS = [
    (doc, i, code)
    for doc in ("README.md", "docs/python.md")
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", (REPOSITORY / doc).read_text(), re.S))
]


@pytest.mark.parametrize("doc,index,code", SNIPPETS, ids=[f"{d}#{i}" for d, i, _ in SNIPPETS])
def test_snippet_runs(doc, index, code, capsys):
    exec(compile(code, f"{doc} python block {index}", "exec"), {})
    assert capsys.readouterr().out.strip(), "the snippet prints its result"
