"""One number, one test family, one palette and one order wherever ffbench shows them (issue #25): the leaderboard,
the figures, the report and ``ffbench power`` must never tell a reader two stories about the same runs."""
import re

import matplotlib
import matplotlib.collections

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ffbench_lib.analysis import metrics, power, ratings
from ffbench_lib.core import stats
from ffbench_lib.present import plots, report  # noqa: E402
from ffbench_lib.present.widgets import StandingsReplay  # noqa: E402
from report_helpers import demo_batch_report, demo_runs as shared_demo_runs  # noqa: E402


@pytest.fixture(scope="module")
def demo_runs(prepared_2024, tmp_path_factory):
    """Two 4-week runs of the demo league (3 adp, 3 vorp, 2 recent_form, 2 random teams: agents meet their own
    teams), played once per test run with test_report's (tests/report_helpers.py): read only."""
    return shared_demo_runs(tmp_path_factory, prepared_2024)


@pytest.fixture(scope="module")
def rep(demo_runs):
    return report.load(str(demo_runs))


def test_one_win_rate_in_the_leaderboard_the_figure_the_tests_and_the_headline(rep):
    d = rep.data
    wr = metrics.agent_win_rate(d)
    # the rule, recomputed from the matchups: games against another agent's team only, ties half
    m = d["matchups"].merge(d["matchups"][["run_id", "week", "team", "agent"]].rename(
        columns={"team": "opponent", "agent": "opp"}), on=["run_id", "week", "opponent"])
    cross = m[m["agent"] != m["opp"]]
    expect = cross.groupby(["run_id", "agent"])["result"].agg(lambda r: ((r == "W").sum() + 0.5 * (r == "T").sum())
                                                              / len(r))
    assert wr.set_index(["run_id", "agent"])["win_rate"].to_dict() == pytest.approx(expect.to_dict())
    # the demo's agents meet their own teams, so the teams' records would give another number
    records = metrics.per_agent(metrics.standings(d), "win_rate").set_index(["run_id", "agent"])["win_rate"]
    assert (records - expect).abs().max() > 0.01
    mean = wr.groupby("agent")["win_rate"].mean()
    assert rep.board.set_index("agent")["win_rate"].to_dict() == pytest.approx(mean.to_dict())
    assert metrics.headline(d).set_index("agent")["win_rate"].to_dict() == pytest.approx(mean.to_dict())
    fig = report.figures(rep)[1]  # the win-rate figure: its dots are the same means
    ax = fig.axes[0]
    dots = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections
                           if isinstance(c, matplotlib.collections.PathCollection)])
    assert sorted(np.round(dots, 6)) == sorted(np.round(mean.to_numpy(), 6))
    assert metrics.WIN_RATE_LABEL in ax.get_xlabel() and "teams of one agent left out" in ax.get_xlabel()
    board = report.leaderboard(rep).data
    assert report.WIN_RATE_COLUMN in board and f"{mean['bot:adp']:.3f}" in board
    assert "win rate (weekly)" not in board
    caveats = report.caveats(rep).data
    assert f"{metrics.WIN_RATE_LABEL}: Friedman" in caveats
    plt.close("all")


def test_the_verdict_and_the_power_table_name_both_tests_and_agree(rep):
    """4 runs: the Wilcoxon verdict cannot reject, the t-test's power can be high; each says which test it is
    and what the other needs, so a reader never gets opposite advice unexplained."""
    d = rep.data
    df = metrics.per_agent(metrics.standings(d), "points_for")
    fried, pairs = stats.friedman(df, "points_for"), stats.pairwise_wilcoxon(df, "points_for")
    verdict = stats.verdict("points for", fried, pairs)
    assert stats.PAIR_TEST in verdict and stats.POWER_TEST in verdict and "ffbench power" in verdict
    table = power.pair_table(d, "points_for")
    text = power.format_report(table)
    need = stats.runs_needed_wilcoxon(table.summary["m"])
    assert table.summary["wilcoxon_min_seeds"] == need == 8  # 6 pairs of 4 agents: 2/2**8 <= 0.05/6
    assert stats.POWER_TEST in text and stats.PAIR_TEST in text
    assert f"can reject no pair below {need} runs" in text and "its power at these 2 runs: 0" in text
    plan = re.search(r"by (\d+) seeds.*\(t-test; the Wilcoxon verdicts: at least (\d+)\)", text)
    assert plan and int(plan[2]) == max(need, int(plan[1])), text


def test_power_table_columns_are_aligned_and_apart(rep):
    text = power.format_report(power.pair_table(rep.data, "points_for"))
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("pair "))
    header, rule, row = lines[head], lines[head + 1], lines[head + 2]
    spans = [m.span() for m in re.finditer(r"-+", rule)]
    names = [header[a:b].strip() for a, b in spans]
    assert names[:4] == ["pair", "n", "diff", "sd field"] and "power now full" in names
    for a, b in spans:  # every header and cell inside its column's rule, columns at least 2 spaces apart
        assert header[a:b].strip() and (a == 0 or header[a - 2:a] == "  ")
        assert row[a - 1:a] in ("", " ") and (len(row) <= b or row[b:b + 1] == " ")
    assert "sd field sd full" not in text


def test_one_palette_and_one_order_in_every_figure_and_the_replay(rep, demo_runs):
    pal = rep.palette
    assert list(pal) == list(rep.board["agent"]) and pal == plots.runs_palette(rep.data)
    assert dict(pal) == dict(plots.agent_palette(rep.data["standings"]["agent"]))  # colours never depend on order
    order = [plots.short(a) for a in pal]
    figs = report.figures(rep)

    def ticks(fig):
        return [re.sub(r" \(.*", "", t.get_text()) for t in fig.axes[0].get_xticklabels()]
    for fig in (figs[3], figs[4], figs[5]):  # slots, draft, start/sit: the leaderboard's order
        assert ticks(fig) == order, fig.axes[0].get_title()
    bars = figs[5].axes[0].patches
    assert [matplotlib.colors.to_hex(b.get_facecolor()) for b in bars] == list(pal.values())
    win = [re.sub(r" \(.*", "", t.get_text()) for t in figs[1].axes[0].get_yticklabels()]
    assert win[::-1] == order  # drawn bottom to top: the first agent on top
    # the replay: coloured by agent with the same palette (an agent's teams differ by line style)
    first = rep.data["meta"]["path"].iloc[0]
    for bump in (StandingsReplay(first, colors=pal).bump, StandingsReplay(first).bump):
        agent_of = rep.data["standings"].drop_duplicates("team").set_index("team")["agent"]
        for team, line in bump.lines.items():
            assert matplotlib.colors.to_hex(line.get_color()) == pal[agent_of[team]], team
        adp = [bump.lines[t].get_linestyle() for t in sorted(bump.lines) if agent_of[t] == "bot:adp"]
        assert len(set(adp)) == len(adp) == 3
    plt.close("all")


def test_points_by_position_title_and_n(rep):
    fig = plots.points_by_position(metrics.points_by_slot(rep.data), rep.info, rep.palette, sample=rep.sample)
    ax = fig.axes[0]
    assert "starting slots" not in ax.get_title() and "lineup slot" in ax.get_title()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "adp (n=6)" or "(n=6)" in " ".join(labels)  # 3 adp teams x 2 runs
    assert rep.sample in ax.get_xlabel().replace("\n", " ") and "team-seasons" in ax.get_xlabel()
    plt.close("all")


def test_y_labels_fit_beside_their_axes(rep):
    d = rep.data
    ss = stats.agent_means(metrics.per_agent(metrics.start_sit_season(d), "left_on_table"), "left_on_table")
    for fig in (plots.draft_performance(metrics.draft_summary(d), rep.info, sample=rep.sample, palette=rep.palette),
                plots.start_sit_regret(ss, rep.palette, rep.info, sample=rep.sample)):
        fig.canvas.draw()
        ax = fig.axes[0]
        label = ax.yaxis.label.get_window_extent()
        assert label.height <= ax.bbox.height + 1, ax.get_title()  # not sticking out above the axes
        assert ax.get_ylabel().count("\n") <= 2
    plt.close("all")


def test_figures_with_nothing_to_show_shrink_to_a_line(rep):
    ci = pd.DataFrame({"agent": ["bot:adp", "bot:vorp"], "runs": [2, 2], "mean": [0.0, 0.0], "ci_low": [0.0, 0.0],
                       "ci_high": [0.0, 0.0], "trades": [0, 0]})
    empty = [plots.trade_value_bars(ci, rep.palette), plots.cost_vs_rating(rep.board, rep.palette, rep.info)]
    for fig in empty:
        assert fig.get_figheight() <= report.NOTE_MAX_IN and not fig.axes[0].axison
        assert 'class="ffb-line"' in report.png(fig).data
    full = report.png(report.figures(rep)[0]).data
    assert 'class="ffb-fig"' in full
    plt.close("all")


def test_report_page_says_its_stages_centres_its_figures_and_prints_no_kernel_warning(tmp_path_factory):
    """The demo batch's page (built once with test_report: tests/report_helpers.py), built with progress on, as
    on a terminal: what it printed on stderr (Python's and the kernel's) and its figures."""
    folder = demo_batch_report(tmp_path_factory)
    err = (folder / "stderr.txt").read_text()
    stages = [line for line in re.split(r"[\r\n]", err) if line.startswith("report: ")]
    assert len(stages) == 3 and "executing notebooks/11_report.ipynb" in stages[0] and "page written" in stages[2]
    assert "Executing" in err  # papermill's bar of the cells
    assert "without encryption" not in err  # the kernel's own log is quieted for ffbench's executions
    page = (folder / "report.html").read_text()
    figs = re.findall(r'<img[^>]*class="(ffb-fig|ffb-line)"', page)
    assert figs.count("ffb-fig") >= 6 and len(figs) == report.embedded_images(page) + 1  # + the replay GIF
    assert re.search(r"img\.ffb-fig \{display: block; margin: 8px auto[^}]*width: 100%", page)
