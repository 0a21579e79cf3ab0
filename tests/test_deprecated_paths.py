"""The module paths of version 0.1.0 import for one release, with a DeprecationWarning, as aliases of the private
rooms that hold their code now (linattn/_deprecated.py); a public name that shares an old path's name stays itself."""
import subprocess
import sys

from linattn import _deprecated


def _run(code):
    out = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out


def test_every_old_path_imports_with_a_warning():
    """One fresh interpreter imports every old path (each warns once, at its first import)."""
    out = _run("import importlib, warnings\n"
               "from linattn import _deprecated\n"
               "for old in sorted(_deprecated.MOVED):\n"
               "    with warnings.catch_warnings(record=True) as w:\n"
               "        warnings.simplefilter('always')\n"
               "        importlib.import_module(old)\n"
               "    said = [str(x.message) for x in w if issubclass(x.category, DeprecationWarning)]\n"
               "    assert any(f'{old} is a private module since linattn 0.2.0' in s and 'removed in 0.3.0' in s\n"
               "               for s in said), (old, said)\n"
               "print(len(_deprecated.MOVED))\n")
    assert int(out.stdout) == len(_deprecated.MOVED) > 60


def test_names_are_the_same_objects_and_public_names_survive():
    _run("import replica, replica._pool_theory as p, linattn._check as c\n"
         "from replica.pool_theory import draw_theory_pool\n"
         "from replica.stationary import stationary\n"
         "from linattn.check import positive_int\n"
         "import dynamics.markov_minimal as mm\n"
         "assert draw_theory_pool is p.draw_theory_pool and positive_int is c.positive_int\n"
         "assert stationary is replica.stationary and callable(replica.stationary)\n"
         "assert mm.markov_minimal_loss is __import__('dynamics').markov_minimal_loss\n"
         "import replica._ridge_law as rl\n"
         "assert replica.kernel_theory.ridge_law is rl.ridge_law\n")


def test_an_unknown_name_of_an_old_path_is_an_attribute_error():
    out = subprocess.run([sys.executable, "-c", "import replica.pool_theory as p; p.no_such_name"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "AttributeError" in out.stderr and "no_such_name" in out.stderr


def test_the_old_paths_are_exactly_the_renamed_modules():
    import importlib.util
    for old, targets in _deprecated.MOVED.items():
        assert importlib.util.find_spec(targets[0]) is not None, targets
        for t in targets:
            assert any(part.startswith("_") for part in t.split(".")), t


def test_the_packages_pickle_by_name():
    """A notebook function that names a package travels to worker processes (cloudpickle pickles the modules it
    uses by name; the packages' module class is a subclass of ``types.ModuleType``, which it does not know)."""
    import pickle

    import diagnostics
    import dynamics
    import linattn
    import replica
    import spectra
    import validation

    for package in (linattn, spectra, dynamics, replica, diagnostics, validation):
        assert pickle.loads(pickle.dumps(package)) is package
