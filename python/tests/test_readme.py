"""The README's Python quickstart runs as written and answers what the float64 oracle does."""

import contextlib
import io
import pathlib
import re

import numpy as np

from conftest import ROOT, assert_matches, oracle


def quickstart():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Quickstart"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_quickstart(tmp_path):
    assert pathlib.Path("/usr/share/datasets/fashion-mnist").is_dir(), (
        "Debian's dataset-fashion-mnist (tools/install-deps.sh) is missing")
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(quickstart(), "README.md quickstart", "exec"), ns)
    res, train, labels, queries = ns["res"], ns["train"], ns["labels"], ns["queries"]
    passing = np.isin(labels, [8, 9])
    assert res.plan["passing_rows"] == passing.sum() == 12000
    assert_matches(res, oracle(train, queries, "l2", 5, passing), np.arange(len(train)), "l2",
                   rtol=1e-6, atol=1.0)
    assert str(res.ids[0, 0]) in out.getvalue()
    ns["db"].close()
