r"""Parameter sweeps that outgrow one machine: a grid runner on local processes or Dask, and a
Zarr result store.

``sweep(fn, grid, replicates, rng, client, store)`` evaluates ``fn(**point, rng=Generator)`` at
every point of the Cartesian product of ``grid`` and every replicate, and returns an
``xarray.Dataset`` whose dimensions are the grid's parameters plus ``replicate`` and whose
variables are the quantities ``fn`` returns (a dict of floats or arrays; an array of shape ``s``
adds dimensions ``{name}_0, {name}_1, …``).

Determinism. The generator of a task is seeded by a ``numpy.random.SeedSequence`` built from the
sweep seed and a SHA-256 digest of ``(grid function name, point values, replicate)``: the numbers do
not depend on scheduling, on the number of workers, or on how a grid is split into several
sweeps. Serial, local-process and Dask runs therefore give bit-identical stores.

Failures. An exception raised by ``fn`` at a point (e.g. the ``ValueError`` of a parameter
combination the experiment refuses) is recorded — ``status`` 2 and the message in the ``error``
variable — and the sweep goes on.

Store. With ``store`` (a directory), the Zarr group holds one array per variable, chunked one
grid point per chunk, a ``status`` array (0 pending, 1 done, 2 failed) and the (truncated) messages
of failed points in ``error``; every array carries its dimension names and the grid values are
coordinate arrays, so ``xarray.open_zarr(store)`` reads a store as :func:`load_sweep` does. :func:`open_store` opens
any store the library writes — a sweep's, or the points of an experiment or a figure (one variable per output over
``point``, the points' parameters as coordinates) — as one ``xarray.Dataset``.
On local processes and Dask workers each task writes its own
point into its own chunks as soon as it is done (no two points share a file, so concurrent writers
never collide; the status is written last, so a write cut short leaves the point pending); the
first point is evaluated by the driver, which creates the arrays from its outputs. An interrupted
sweep loses at most the points in flight, and re-running the same sweep skips the points already
done. Worker-side writing needs the store on a filesystem the workers share (always true for local
processes and a LocalCluster). The attributes record the library version, the git commit,
a hash of the experiment's source code, the grid and the seed, and a store written by another
code version is refused unless ``allow_mixed=True``.

Execution. ``client=None`` runs on local processes (``workers`` of them, default: the number of
cores; ``workers=1`` runs serially in this process); a ``dask.distributed.Client`` runs on its
cluster. Worker processes that this module starts get one BLAS/OpenMP/numba thread each, so that
``workers`` processes do not oversubscribe the cores; the numba cache on disk is shared.

Requires the optional extra ``pip install -e ".[dask]"`` (xarray, zarr, dask.distributed).
"""
from ._grid import GRID_FUNCTIONS, Task, grid_function, task_seed
from ._open import open_store
from ._points import read_points
from ._runners import MAX_WORKERS, WORKER_DIED, WORKER_ENV, checked_client, local_cluster, worker_env
from ._store import DONE, ERROR_CHARS, FAILED, PENDING, load_sweep, sweep_summary
from ._sweep import run_points, sweep

__all__ = ["sweep", "load_sweep", "open_store", "sweep_summary", "run_points", "read_points", "local_cluster",
           "checked_client", "worker_env", "grid_function", "GRID_FUNCTIONS", "Task", "task_seed", "PENDING", "DONE",
           "FAILED", "ERROR_CHARS", "MAX_WORKERS", "WORKER_DIED", "WORKER_ENV"]
