"""examples/python/analyse_hits.py runs and says what it found."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def test_analyse_hits(tmp_path):
    out = tmp_path / "hits.png"
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "analyse_hits.py"),
                          "--photons", "20000", "--out", str(out)],
                         capture_output=True, text=True, env=dict(os.environ), check=True)
    assert "photons detected" in run.stdout
    assert out.exists() or "#" in run.stdout  # the PNG, or the text histogram
