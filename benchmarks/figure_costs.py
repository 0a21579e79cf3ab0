"""What each registered figure costs: ``linattn figures NAME --MODE`` for every figure, one at a time in a fresh
process (its experiment's points in that process, BLAS on the library's own thread choice), on an otherwise idle
machine; prints the seconds each took (``manifest.json`` records them) as the table of
``validation/gallery/costs.py``. Not a ratio benchmark: it measures what ``linattn figures --list`` tells a user.

Run: .venv/bin/python benchmarks/figure_costs.py quick [NAME ...]   (or full; torch figures need the [torch] extra)
"""
import json
import subprocess
import sys
import tempfile

from validation import gallery


def costs(mode, names):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            subprocess.run([sys.executable, "-m", "validation._app.cli", "figures", name, f"--{mode}", "--out", tmp,
                            "--no-progress"], check=True, stdout=subprocess.DEVNULL)
            with open(f"{tmp}/manifest.json") as fh:
                out[name] = json.load(fh)[name]["seconds"]
            print(f"{name:22s} {out[name]:8.1f} s", flush=True)
    return out


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "quick"
    names = sys.argv[2:] or [n for n, f in gallery.registry().items() if not f.requires]
    print(costs(mode, names))
