"""The standings replay on a real 3-week bot run: its bump chart draws the standings table's ranks, its slider
spans the weeks, its animation has one frame per week, and where widgets cannot render it shows a picture."""
from __future__ import annotations

import base64
import io
import json
import sys

import pytest
from engine_helpers import demo_league, run_engine
from PIL import Image

from ffbench_lib.present import plots
from ffbench_lib.present.widgets import StandingsReplay

WEEKS = 3


@pytest.fixture(scope="module")
def run(prepared_2024, tmp_path_factory):
    out = tmp_path_factory.mktemp("replay") / "run"
    run_engine(demo_league(seed=3, weeks=WEEKS), prepared_2024, out)
    return out


def test_bump_chart_draws_the_standings_tables_ranks(run):
    w = StandingsReplay(run)
    assert (w.slider.min, w.slider.max) == (w.play.min, w.play.max) == (1, WEEKS)
    for week in range(1, WEEKS + 1):
        w.slider.value = week
        table = w.frames(week)["standings"]
        # the table shown lists its teams in rank order
        shown = sorted(table["team"], key=lambda t: w.table.value.index(f">{t}<"))
        assert shown == list(table.sort_values("rank")["team"])
        fig = plots.bump_chart(w.standings, week=week)
        ax = fig.axes[0]
        lines = {line.get_label(): line for line in ax.lines}
        assert set(lines) == set(table["team"])
        for team, rank in zip(table["team"], table["rank"]):
            x, y = lines[team].get_data()
            assert list(x)[-1] == week and list(y)[-1] == rank  # drawn up to this week, at the table's rank
            label = next(t for t in ax.texts if t.get_text() == team)
            assert label.xy == (week, rank) and label.get_color() == lines[team].get_color()  # labelled at its end
        assert ax.get_ylim()[0] > ax.get_ylim()[1]  # rank 1 on top
    # every week's rank on the full chart is that week's table's, and a team keeps its colour in every frame
    full = {line.get_label(): line for line in plots.bump_chart(w.standings).axes[0].lines}
    first = {line.get_label(): line.get_color() for line in plots.bump_chart(w.standings, week=1).axes[0].lines}
    for week in range(1, WEEKS + 1):
        table = w.frames(week)["standings"]
        assert {t: dict(zip(*full[t].get_data()))[week] for t in table["team"]} == dict(zip(table["team"],
                                                                                          table["rank"]))
    assert first == {t: line.get_color() for t, line in full.items()}
    # coloured by agent (the figures' palette, #25): one colour per agent, teams of one agent share it
    agent_of = w.standings.drop_duplicates("team").set_index("team")["agent"]
    assert first == {t: plots.agent_palette(agent_of)[agent_of[t]] for t in first}


def test_chart_in_the_widget_follows_the_slider(run):
    w = StandingsReplay(run)
    week1 = w.chart.value
    w.slider.value = WEEKS
    assert w.chart.value != week1 and w.chart.value == w.png() and w.chart.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"week {WEEKS} of {WEEKS}" in w.caption.value
    assert "white-space:nowrap" in w.table.value  # team names never wrap


def test_notebook_display_carries_a_picture_beside_the_widget(run):
    from IPython.core.formatters import DisplayFormatter

    w = StandingsReplay(run)
    data, metadata = DisplayFormatter().format(w)  # what a kernel sends for a cell ending with the replay
    assert "application/vnd.jupyter.widget-view+json" in data
    png = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    assert png.format == "PNG" and png.width >= 2 * metadata["image/png"]["width"] - 2
    assert data["text/plain"].startswith("Standings replay of") and "VBox" not in data["text/plain"]


def test_gif_has_one_frame_per_week(run, tmp_path):
    w = StandingsReplay(run)
    assert w.save(tmp_path / "replay.gif") == tmp_path / "replay.gif"
    with Image.open(tmp_path / "replay.gif") as gif:
        assert gif.format == "GIF" and gif.n_frames == WEEKS and gif.info["loop"] == 0
        durations = []
        for i in range(WEEKS):
            gif.seek(i)
            durations.append(gif.info["duration"])
    # 1.5 weeks a second; the final standings stay 2 s longer (3 more frames' time) before the loop restarts
    assert len(set(durations[:-1])) == 1 and durations[-1] == pytest.approx(4 * durations[0], abs=20)
    assert [p.name for p in tmp_path.iterdir()] == ["replay.gif"]  # no temporary file left


def test_mp4_has_one_frame_per_week(run, tmp_path):
    """MP4 export for real, with the ffmpeg binary of the imageio-ffmpeg dependency (no system ffmpeg needed)."""
    import imageio_ffmpeg

    w = StandingsReplay(run)
    assert w.save(tmp_path / "replay.mp4", fps=2) == tmp_path / "replay.mp4"
    assert (tmp_path / "replay.mp4").read_bytes()[4:8] == b"ftyp"  # an MP4 container
    frames, secs = imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "replay.mp4"))  # ffmpeg decodes it
    assert frames == WEEKS + 4 and secs == pytest.approx((WEEKS + 4) / 2, abs=0.1)  # the last held 2 s
    assert [p.name for p in tmp_path.iterdir()] == ["replay.mp4"]


def test_without_ffmpeg_mp4_export_is_one_line_and_other_formats_are_refused(run, tmp_path, monkeypatch):
    w = StandingsReplay(run)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # a machine without the package ...
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # ... and without a system ffmpeg
    with pytest.raises(plots.ExportError, match=r"^MP4 export needs ffmpeg.*pip install imageio-ffmpeg") as exc:
        w.save(tmp_path / "replay.mp4")
    assert "\n" not in str(exc.value)
    monkeypatch.undo()
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", str(tmp_path / "no-ffmpeg"))  # a wrong explicit path is named
    with pytest.raises(plots.ExportError, match=r"IMAGEIO_FFMPEG_EXE=.*no-ffmpeg is not an ffmpeg program"):
        w.save(tmp_path / "replay.mp4")
    with pytest.raises(plots.ExportError, match=r"replay\.avi: the replay is exported as \.gif or \.mp4"):
        w.save(tmp_path / "replay.avi")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def executed(run, tmp_path_factory):
    """notebooks/03_standings.ipynb executed once on the run (as ffbench executes notebooks): the two tests below
    read it. ``(executed notebook, its out folder)``."""
    from ffbench_lib.runs.notebooks import execute

    tmp = tmp_path_factory.mktemp("standings_nb")
    params = {"runs": [str(run)], "out": str(tmp / "out")}
    return execute("03_standings.ipynb", tmp / "03.ipynb", params, timeout_s=600), tmp / "out"


@pytest.mark.slow
def test_executed_standings_notebook_shows_the_replay_as_a_picture(executed):
    nb, out = executed
    outputs = [o for c in json.loads(nb.read_text())["cells"] for o in c.get("outputs", [])]
    replay = [o["data"] for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(replay) == 1 and "image/png" in replay[0]
    assert "".join(replay[0]["text/plain"]).startswith("Standings replay")
    with Image.open(out / "standings_replay.gif") as gif:
        assert gif.n_frames == WEEKS


def test_html_export_of_an_executed_notebook_shows_the_replay_picture_offline(executed):
    """nbclient stores the kernel's widget state in the executed notebook (``metadata.widgets``); nbconvert then
    renders the replay as a live widget whose manager loads from unpkg: blank offline. ffbench's executed notebooks
    (here 03_standings, whose last cell ends with the replay) drop that state, so nbconvert (its own lab template)
    shows the replay's PNG and loads no widget manager."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed[0], as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert "StandingsReplay(" in last.source and last.source.rstrip().endswith("replay")
    shown = [o["data"] for o in last.outputs if o.get("output_type") == "execute_result"]
    assert len(shown) == 1 and "image/png" in shown[0]  # the kernel sent the picture beside the widget
    assert "application/vnd.jupyter.widget-view+json" in shown[0]  # ... for a live widget
    assert "widgets" not in nb.metadata  # no widget state kept
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    body = page[page.index("<body"):]
    assert f'src="data:image/png;base64,{shown[0]["image/png"].strip()}' in body.replace("\n", "")
    assert "unpkg" not in page and "widget-state+json" not in page and "widget-view+json" not in body
