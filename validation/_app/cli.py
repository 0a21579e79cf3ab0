"""The ``linattn`` command line.

Subcommands
-----------
``info``      population quantities of a problem (c, c_v, the ICL solution and its test error)
``figures``   regenerate the seed figures (PNG + PDF + data) into a folder
``validate``  run every theory-vs-simulation comparison and write a Markdown report
``sweep``     run a registered grid function (or ``module:function``) over a parameter grid in a TOML
              file, serially, on local processes or on a Dask cluster, into a Zarr store
"""
from __future__ import annotations

import argparse
import os
import sys


def _info(args):
    import linattn

    pb = linattn.Problem(D=args.D, N=args.N, noise=args.noise, tasks=args.tasks, link=args.link)
    # scalars only: no D x D array is built, so any D is answered instantly
    print(f"Problem(D={pb.D}, N={pb.N}, noise={pb.noise}" + (f", tasks={pb.tasks}" if pb.tasks else "")
          + (f", link={args.link!r}" if args.link != "linear" else "") + ")")
    if args.link != "linear":
        mu0, mu1, mustar2 = pb.hermite
        print(f"  Hermite coefficients mu0, mu1, mu*^2 = {mu0:.10g}, {mu1:.10g}, {mustar2:.10g}")
        print(f"  teacher strength b, label variance V = {pb.teacher_strength:.10g}, {pb.label_variance:.10g}")
    print(f"  feature variance c            = {pb.feature_variance:.10g}")
    print(f"  v-feature variance c_v        = {pb.feature_variance_v:.10g}")
    print(f"  parameters M ({args.model + ')':8s}   = {pb.n_params(args.model)}")
    print(f"  ICL solution Gamma = b I/(D c)= {pb.teacher_norm2:.10g} * I,  v = 0   (the same for both models)")
    print(f"  test error E_g(Gamma_ICL)     = {pb.test_error_from_moments(pb.teacher_norm2, pb.teacher_norm2):.10g}")
    print(f"  test error of Gamma = 0       = {pb.test_error_from_moments(0.0, 0.0):.10g}")
    if pb.tasks:
        print(f"  task pool: K = {pb.tasks} tasks per dataset, kappa = K/D = {pb.tasks / pb.D:.6g} "
              f"({pb.task_law} tasks, {pb.assignment} assignment)")
    return 0


def _figures(args):
    from linattn import _check as check

    from .. import gallery as figures

    if args.list:
        print(figures.listing())
        return 0
    if not figures.names():
        print("no figures are registered yet")
        return 0
    check.positive_int("--workers", args.workers)
    if args.store is not None and (not args.store.strip() or os.path.isfile(args.store)):
        check.fail("--store", args.store, "a folder path (not a file)")
    if (args.workers != 1 or args.scheduler) and not args.store:
        raise ValueError("--workers and --scheduler evaluate a figure's points into a store: give --store DIR")
    if args.scheduler is not None and not args.scheduler.strip():
        raise ValueError("scheduler must be the address of a Dask scheduler (tcp://host:port); got ''")
    paths = figures.make(args.names or ["all"], args.out, mode=_mode(args), progress=not args.no_progress,
                         store=args.store, jobs=args.jobs, exclude=args.exclude or (), workers=args.workers,
                         scheduler=args.scheduler)
    for p in paths:
        print(p)
    return 0


def _validate(args):
    from . import report

    mode = _mode(args)
    path, ok = report.run(args.out, mode=mode, progress=not args.no_progress, reuse=args.reuse)
    print(path)
    if mode == "smoke":       # tiny settings cannot pass: they exercise the code, nothing is judged
        print("smoke mode: every comparison ran; its rows exercise the code with tiny settings and are not judged "
              "(use --quick or --full to validate the theory)")
        return 0
    return 0 if ok else 1


def _sweep(args):
    import importlib

    from linattn import _check as check

    from .. import sweeps as sw

    fn = args.grid_function
    if ":" in fn:
        module, _, name = fn.partition(":")
        if os.getcwd() not in sys.path:       # `linattn sweep mymodule:f` finds mymodule.py in the current folder,
            sys.path.insert(0, os.getcwd())   # as `python -m` would
        _probe_import(module, args.grid_function)
        try:
            fn = getattr(importlib.import_module(module), name)
        except (Exception, SystemExit) as err:   # ImportError, AttributeError, whatever a broken module raises,
            #                                        and a module that calls sys.exit when imported
            raise ValueError(f"grid_function must be a registered name or an importable module:function; "
                             f"{args.grid_function!r}: {type(err).__name__}: {err}") from None
    else:
        from .. import experiments  # noqa: F401  (importing it registers the grid functions)

        if fn not in sw.GRID_FUNCTIONS:      # else refused by sweep() under its own argument name, "fn"
            check.fail("grid_function", fn, f"a registered grid function {sorted(sw.GRID_FUNCTIONS)} or an importable "
                       "module:function")
    check.seed_int("--seed", args.seed)
    check.positive_int("--replicates", args.replicates)
    if args.workers is not None:
        check.positive_int("--workers", args.workers)
    if args.timeout is not None:
        check.real("--timeout", args.timeout, low=0.0, low_open=True, high=1e9)
    if args.store is not None and not args.store.strip():
        check.fail("--store", args.store, "a folder path")
    grid = _read_grid(args.grid)
    kw = dict(replicates=args.replicates, rng=args.seed, store=args.store, allow_mixed=args.allow_mixed,
              timeout=args.timeout,
              progress=not args.no_progress)
    if args.scheduler is not None:
        client = _connect(args.scheduler)
        try:
            ds = sw.sweep(fn, grid, client=client, **kw)
        finally:
            client.close()
    elif args.workers and args.workers > 1:
        with sw.local_cluster(args.workers) as client:
            ds = sw.sweep(fn, grid, client=client, **kw)
    else:                 # serial points run in one worker process: a point that ends its process is its failure
        ds = sw.sweep(fn, grid, workers=args.workers, isolate=True, **kw)
    done = int((ds["status"] == sw.DONE).sum())
    failed = int((ds["status"] == sw.FAILED).sum())
    print(f"{done} of {ds['status'].size} evaluations done, {failed} failed"
          + (f"; store: {args.store}" if args.store else ""))
    _print_results(ds, sw)
    return 1 if failed else 0


def _probe_import(module, grid_function):
    """Import ``module`` first in a forked child (POSIX): a module that ends its process when imported (``os._exit``)
    would otherwise end this command silently with its exit status. The child's output is discarded; the import
    that counts is the parent's (its exceptions are reported as usual)."""
    if not hasattr(os, "fork"):
        return
    import importlib

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # child: import, report, exit without cleanup
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            try:
                importlib.import_module(module)
            except BaseException:                  # noqa: BLE001 - the parent's import reports it
                pass
            os.write(write, b"ok")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        answer = fh.read()
    _, status = os.waitpid(pid, 0)
    if answer != b"ok":
        raise ValueError(f"grid_function must be a registered name or an importable module:function; "
                         f"{grid_function!r}: importing {module!r} ends the process (exit status "
                         f"{os.waitstatus_to_exitcode(status)})")


def _print_results(ds, sw):
    """Mean ± s.e. over replicates of every output at every grid point, and each failed point's error."""
    import itertools

    dims = [d for d in ds["status"].dims if d != "replicate"]
    outputs = [k for k in ds.data_vars if k not in ("status", "error") and ds[k].ndim == len(dims) + 1]
    summary = sw.sweep_summary(ds) if outputs else None
    for values in itertools.product(*(ds[d].values for d in dims)):
        where = dict(zip(dims, values))
        point = ", ".join(f"{d}={v}" for d, v in where.items())
        cells = []
        if summary is not None:
            n = int(summary["n"].sel(where))
            for k in (outputs if n else ()):         # no mean of nothing (nan) where every evaluation failed
                m, se = float(summary[f"{k}_mean"].sel(where)), float(summary[f"{k}_se"].sel(where))
                cells.append(f"{k} = {m:.6g}" + (f" ± {se:.2g}" if n > 1 else ""))
            cells.append(f"n = {n}")
        print(f"  {point}: " + ("; ".join(cells) if cells else "no outputs"))
        errors = [str(e) for e, s in zip(ds["error"].sel(where).values.ravel(), ds["status"].sel(where).values.ravel())
                  if s == sw.FAILED]
        for message in sorted(set(errors)):
            print(f"    failed ({errors.count(message)}×): {message}")


def _read_grid(path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            grid = tomllib.load(fh)
    except OSError as err:
        raise ValueError(f"--grid must be a readable TOML file; {path!r}: {err.strerror or err}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"--grid must be a UTF-8 TOML file of `name = [values]` lines; {path!r}: {err}") from None
    return grid


def _connect(address):
    if not address.strip() or "://" not in address and ":" not in address:
        raise ValueError(f"scheduler must be the address of a Dask scheduler, e.g. tcp://host:8786; got {address!r}")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("scheduler needs dask.distributed: pip install -e \".[dask]\"") from None
    try:
        return Client(address, timeout="3s")
    except (OSError, TimeoutError) as err:
        raise ValueError(f"scheduler {address!r} cannot be reached: {err}") from None


def _mode(args):
    return "full" if args.full else "smoke" if args.smoke else "quick"


def _modes(q):
    mode = q.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="quick settings (default)")
    mode.add_argument("--full", action="store_true", help="the seed papers' full protocol")
    mode.add_argument("--smoke", action="store_true", help="tiny settings that only exercise the code (for tests)")


def _registered_help():
    import inspect

    from ..sweeps import GRID_FUNCTIONS

    lines = ["registered grid functions and their parameters (grid keys; the rest keep their defaults):"]
    for name, fn in sorted(GRID_FUNCTIONS.items()):
        params = [str(p) for p in inspect.signature(fn).parameters.values() if p.name != "rng"]
        doc = (inspect.getdoc(fn) or "").split("\n")[0]
        lines += [f"  {name}({', '.join(params)})", f"      {doc}"]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """argparse with the command's promise: an error is one line on stderr (no usage block) and exit status 2."""

    def error(self, message):
        self.exit(2, f"linattn: error: {self.prog}: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``linattn`` command.

    Returns
    -------
    argparse.ArgumentParser
    """
    p = _Parser(
        prog="linattn",
        description="Theory of in-context learning in single-layer linear attention trained on finite "
                    "data (Hessian spectra, free energies, learning dynamics), checked against simulation.")
    sub = p.add_subparsers(dest="command", required=True)

    q = sub.add_parser("info", help="population quantities of a problem")
    q.add_argument("--D", type=int, required=True, help="token dimension")
    q.add_argument("--N", type=int, required=True, help="context length")
    q.add_argument("--noise", type=float, default=0.0, help="label-noise standard deviation sigma")
    q.add_argument("--link", default="linear", help="link of the single-index labels: linear (default), tanh, relu, "
                   "sign, cubic, hermite:k")
    q.add_argument("--tasks", type=int, default=None, help="task pool size K (default: a fresh task per prompt)")
    q.add_argument("--model", choices=("reduced", "full"), default="reduced", help="trained blocks (default reduced)")
    q.set_defaults(func=_info)

    q = sub.add_parser("figures", help="regenerate the seed figures")
    q.add_argument("names", nargs="*", help="figure names (see --list) or 'all'")
    _modes(q)
    q.add_argument("--out", default="figures", help="output folder (default: figures)")
    q.add_argument("--list", action="store_true", help="list the registered figures")
    q.add_argument("--store", "--from-store", dest="store", default=None, metavar="DIR",
                   help="compute each figure's points resumably into Zarr stores under DIR and draw from them "
                        "(a second call evaluates nothing that is done; validation.open_store(DIR) opens one as "
                        "an xarray Dataset)")
    where = q.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1,
                       help="with --store: a Dask LocalCluster of N single-threaded workers evaluates the points "
                            "(default 1: this process)")
    where.add_argument("--scheduler", default=None,
                       help="with --store: address of a Dask scheduler evaluating the points, e.g. tcp://host:8786")
    q.add_argument("--no-progress", action="store_true", help="no progress bars")
    q.add_argument("--jobs", type=int, default=1, help="figures computed in parallel processes (default 1)")
    q.add_argument("--exclude", action="append", metavar="NAME", help="leave figure NAME out (repeatable)")
    q.set_defaults(func=_figures)

    q = sub.add_parser("validate", help="theory-vs-simulation report")
    _modes(q)
    q.add_argument("--out", default="figures", help="output folder (default: figures)")
    q.add_argument("--no-progress", action="store_true", help="no progress bars")
    q.add_argument("--reuse", action="store_true",
                   help="take the results the figures drew into --out (same settings, same source) instead of "
                        "computing them again (make run: figures first, then the report)")
    q.set_defaults(func=_validate)

    q = sub.add_parser("sweep", help="run a grid function over a parameter grid (local processes or Dask)",
                       description="Run a registered grid function (or your module:function taking **point and rng) "
                                   "over the Cartesian product of a TOML grid. Without --store the mean ± s.e. over "
                                   "replicates of every output is printed per grid point.",
                       epilog=_registered_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("grid_function", help="registered grid function (listed below) or module:function")
    q.add_argument("--grid", required=True, help="TOML file: one `name = [values]` line per parameter")
    q.add_argument("--replicates", type=int, default=1, help="evaluations per grid point (default 1)")
    q.add_argument("--seed", type=int, default=0, help="sweep seed (default 0)")
    q.add_argument("--store", default=None, help="Zarr folder (resumable); default: results only printed")
    where = q.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None,
                       help="N > 1: a Dask LocalCluster of N single-threaded workers; 1: serial "
                            "(default: local processes, one per core)")
    where.add_argument("--scheduler", default=None, help="address of a Dask scheduler, e.g. tcp://host:8786")
    q.add_argument("--timeout", type=float, default=None,
                   help="seconds an evaluation may run; a longer one is stopped and recorded failed (default: none)")
    q.add_argument("--allow-mixed", action="store_true", help="accept a store written by another code version")
    q.add_argument("--no-progress", action="store_true", help="no progress bar")
    q.set_defaults(func=_sweep)
    return p


def _one_line_warning(message, category, filename, lineno, line=None):
    """Warnings of the command are one line each too (``linattn: warning: …``), like its errors."""
    return f"linattn: warning: {' '.join(str(message).split())} ({category.__name__})\n"


def main(argv=None) -> int:
    """Run the command line; every error is one line on stderr and a non-zero exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 when a validation comparison fails, 2 on bad input, 3 on a solver that did
        not converge, 4 on an operating-system error, 5 when memory runs out, 6 when an optional
        extra is missing, 130 on Ctrl-C (``interrupted: …``; a run with ``--store`` resumes when run again).
    """
    import warnings

    from linattn._errors import ConvergenceError

    args = build_parser().parse_args(argv)
    saved, warnings.formatwarning = warnings.formatwarning, _one_line_warning
    try:
        return args.func(args)
    except ValueError as err:
        code, message = 2, str(err)
    except ConvergenceError as err:
        code, message = 3, str(err)
    except OSError as err:      # a path the run cannot read or write: name it
        code, message = 4, (f"{err.strerror}: {err.filename!r}" if err.filename and err.strerror else str(err))
    except ImportError as err:
        code, message = 6, str(err)
    except MemoryError:
        code, message = 5, "out of memory (reduce the sizes or set LINATTN_MEMORY_LIMIT)"
    except KeyboardInterrupt as err:     # Ctrl-C: one line (a stored run says how much is kept and how to resume)
        code, message = 130, str(err) or "interrupted"
    finally:
        warnings.formatwarning = saved
    print(f"linattn: error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
