"""``validation.gallery.plot_curves``: a user's own theory and simulation curves in the figures' style."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from validation.gallery import plot_curves, style  # noqa: E402

X = np.geomspace(10, 1000, 12)


@pytest.fixture
def ax():
    with style():
        fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_draws_the_theory_the_markers_and_the_band_in_the_style(ax):
    art = plot_curves(ax, X, theory=1 / X, simulation=1.02 / X[::4], se=0.01 / X[::4], x_sim=X[::4],
                      band=(0.9 / X, 1.1 / X), label="test")
    line, bars, band = art["theory"], art["simulation"], art["band"]
    np.testing.assert_array_equal(line.get_xdata(), X)
    np.testing.assert_array_equal(line.get_ydata(), 1 / X)
    np.testing.assert_array_equal(bars.lines[0].get_ydata(), 1.02 / X[::4])
    assert band is not None and line.get_label() == "test" and bars.get_label() == "test, simulation ± 1 s.e."
    # the style's first colour, its line width; open markers as in the figures
    assert line.get_color() == "#1f4e9c" and line.get_linewidth() == 1.4
    assert bars.lines[0].get_markerfacecolor() in ("w", (1.0, 1.0, 1.0, 1.0))
    # the next curve takes the cycle's next colour
    assert plot_curves(ax, X, theory=2 / X)["theory"].get_color() == "#c0392b"


def test_simulation_alone_and_saved(ax, tmp_path):
    art = plot_curves(ax, X, simulation=1 / X, se=np.zeros(X.size), label="sim")
    assert art["theory"] is None and art["simulation"].get_label() == "sim"
    art = plot_curves(ax, X, theory=1 / X, simulation=1 / X, label="a", simulation_label="exact")
    assert art["theory"].get_label() == "a" and art["simulation"].get_label() == "exact"
    ax.figure.savefig(tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000


@pytest.mark.parametrize("kwargs, name", [
    (dict(), "theory"),                                               # nothing to draw
    (dict(theory=np.ones(3)), "theory"),                              # wrong length
    (dict(simulation=np.ones(12), se=-np.ones(12)), "se"),
    (dict(theory=np.ones(12), se=np.ones(12)), "se"),                 # s.e. without a simulation
    (dict(simulation=np.ones(4), x_sim=np.ones(5)), "simulation"),
    (dict(theory=np.ones(12), band=np.ones(12)), "band"),
    (dict(theory=np.ones(12), label=3), "label"),
    (dict(theory=[np.nan] * 12), "theory"),
])
def test_bad_input_names_the_argument(ax, kwargs, name):
    with pytest.raises(ValueError, match=f"plot_curves: {name}"):
        plot_curves(ax, X, **kwargs)


def test_ax_must_be_axes():
    with pytest.raises(ValueError, match="ax must be a matplotlib Axes"):
        plot_curves(None, X, theory=1 / X)


def test_panel_letters_and_result_path_check_their_arguments():
    """panel_letters called .text on whatever axes held (AttributeError for a number or None) and iterated labels
    unchecked (TypeError); result_path joined a non-path out_dir (os.path's TypeError)."""
    from validation.gallery import panel_letters, result_path

    fig, axs = plt.subplots(1, 2)
    try:
        assert [t.get_text() for t in panel_letters(axs)] == ["(a)", "(b)"]
        for axes in (None, 0.5, "abc", [axs[0], None], [[axs[0]], [axs[0], axs[1]]]):
            with pytest.raises(ValueError, match=r"^axes must be"):
                panel_letters(axes)
        for labels in (1.0, ["(a)"], ["(a)", 2], "ab"):
            with pytest.raises(ValueError, match=r"^labels must be"):
                panel_letters(axs, labels=labels)
        with pytest.raises(ValueError, match=r"^size must be"):
            panel_letters(axs, size=float("nan"))
    finally:
        plt.close(fig)
    assert result_path("out", "spectra", "quick").endswith("spectra-quick.npz")
    for bad in (None, 1.0, ["out"]):
        with pytest.raises(ValueError, match=r"^out_dir must be"):
            result_path(bad, "spectra", "quick")
