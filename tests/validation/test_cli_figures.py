"""The command line and the figure registry (smoke tests of what `make run` calls)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from validation import cli
from validation import plots as figures


def test_help_and_info(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "figures" in capsys.readouterr().out
    assert cli.main(["info", "--D", "10", "--N", "100"]) == 0
    out = capsys.readouterr().out
    assert "0.111" in out and "1.224" in out
    assert cli.main(["info", "--D", "0", "--N", "5"]) == 2
    assert "D must be" in capsys.readouterr().err


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "linattn")
    res = subprocess.run([exe, "figures", "--list"], capture_output=True, text=True, check=True)
    for name in ("fig1", "fig2", "fig3", "fig4", "fig5", "fig6"):
        assert name in res.stdout


def test_unknown_figure_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="figure names"):
        figures.make(["fig99"], str(tmp_path))


def test_fig4_writes_image_pdf_and_data(tmp_path):
    paths = figures.make(["fig4"], str(tmp_path), quick=True, progress=False)
    assert {os.path.splitext(p)[1] for p in paths} == {".png", ".pdf", ".npz"}
    assert all(os.path.getsize(p) > 1000 for p in paths)
    d = np.load(os.path.join(tmp_path, "fig4.npz"))
    t, test = d["times_P10"], d["test_P10"]
    assert t.shape == test.shape and np.all(np.isfinite(test))
