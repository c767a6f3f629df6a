"""The timed-program, heterogeneous and precedence models: the CLI's reports."""

import numpy as np
import pytest

import taskmap
from conftest import FIXTURES


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def test_simulate_equals_the_cli(cli, tmp_path):
    prog = taskmap.generate_program("mesh:4x4,rounds=2")
    path = tmp_path / "p.prog"
    path.write_text(prog.to_text())
    assert taskmap.read_program(path).num_tasks == prog.num_tasks == 16
    want = cli.json("sim", "-g", path, "-a", "mesh:2x4", "-A", "multilevel", "--f", "-s", 2)
    got = taskmap.simulate(prog, "mesh:2x4", algorithm="multilevel", f=True, seed=2)
    assert got["mapping"].dtype == np.uint32 and got["mapping"].shape == (16,)
    assert without(got, "wall_seconds", "mapping") == without(want, "wall_seconds")
    again = taskmap.simulate(str(path), taskmap.Arch("mesh:2x4"), mapping=got["mapping"])
    assert again["completion"] == got["completion"]
    ideal = taskmap.simulate(prog, ideal=True)
    assert ideal["target"] == "ideal machine" and ideal["completion"] <= got["completion"]


def test_simulate_refuses_bad_input(tmp_path):
    prog = taskmap.generate_program("ring:4")
    with pytest.raises(ValueError):
        taskmap.simulate(prog)
    with pytest.raises(ValueError):
        taskmap.simulate(prog, "mesh:2x2", mapping=[0, 1, 2, 4])
    with pytest.raises(ValueError):
        taskmap.simulate(prog, "mesh:2x2", flit_cycles=0)
    with pytest.raises(ValueError):
        taskmap.simulate(prog, "mesh:2x2", epsilon=0.1)
    with pytest.raises(ValueError):
        taskmap.simulate(prog, "mesh:2x2", algorithm="drb", threads=0)
    with pytest.raises(ValueError):
        taskmap.generate_program("nonsense:3")
    with pytest.raises(taskmap.FormatError):
        taskmap.read_program(FIXTURES / "programs" / "unknown_task.prog")


@pytest.mark.parametrize("algorithm", ["mateha", "heft"])
def test_hetero_equals_the_cli(cli, algorithm):
    model = FIXTURES / "hetero" / "small.ttig"
    want = cli.json("hetero", "-g", model, "-A", algorithm, "--optimal")
    got = taskmap.hetero(str(model), algorithm=algorithm, optimal=True)
    assert got == want
    alloc = [t["processor"] for t in got["tasks"]]
    again = taskmap.hetero(str(model), allocation=alloc)
    assert again["allocation_source"] == "file"
    with pytest.raises(ValueError):
        taskmap.hetero(str(model), allocation=[0])


def test_hetero_reads_stg_with_a_platform(cli):
    stg, plat = FIXTURES / "hetero" / "rand0000.stg", FIXTURES / "hetero" / "two_sites.platform"
    want = cli.json("hetero", "--stg", stg, "--platform", plat)
    assert taskmap.hetero(stg=str(stg), platform=str(plat)) == want
    with pytest.raises(ValueError):
        taskmap.hetero()
    with pytest.raises(ValueError):  # an STG file is not a workflow
        taskmap.hetero(workflow=str(stg), platform=str(plat))


def test_amap_equals_the_cli(cli):
    graph = FIXTURES / "amap" / "cholesky4.amg"
    want = cli.json("amap", "-g", graph, "-k", 4, "--system", "bus")
    got = taskmap.amap(str(graph), 4, system="bus")
    assert got == want
    given = taskmap.amap(str(graph), 4, system="bus", assignment=got["processor_of"])
    assert given["t_real"] == got["t_real"]
    with pytest.raises(ValueError):
        taskmap.amap(str(graph), 4, system="nonsense")


def test_amap_delay_model_equals_the_cli(cli):
    graph = FIXTURES / "amap" / "cholesky4.amg"
    want = cli.json("amap", "-g", graph, "-k", 4, "--system", "multibus:2", "--itu-time", 0.1,
                    "--delay-model", "paper")
    got = taskmap.amap(str(graph), 4, system="multibus:2", itu_time=0.1, delay_model="paper")
    assert got == want and got["delay_model"] == "paper"
    assert taskmap.amap(str(graph), 4, system="multibus:2", itu_time=0.1)["delay_model"] == "queue"
    with pytest.raises(ValueError):
        taskmap.amap(str(graph), 4, delay_model="printed")


def test_amap_monte_carlo_equals_the_cli(cli):
    graph = FIXTURES / "amap" / "realtime.amg"
    want = cli.json("amap", "-g", graph, "-k", 2, "--system", "bus", "--itu-time", 0.1,
                    "--monte-carlo", 200, "--seed", 3)
    got = taskmap.amap(str(graph), 2, system="bus", itu_time=0.1, monte_carlo=200, seed=3)
    assert got == want
    mc = got["monte_carlo"]
    assert mc["samples"] == 200 and mc["ci95"][0] < mc["mean"] < mc["ci95"][1]
    with pytest.raises(ValueError):
        taskmap.amap(str(graph), 2, system="bus", monte_carlo=1)


def test_the_scipy_example_runs(tmp_path):
    pytest.importorskip("matplotlib")
    import runpy
    import sys

    from conftest import ROOT

    out = tmp_path / "traffic.png"
    argv = sys.argv
    sys.argv = ["scipy_tree.py", "--out", str(out)]
    try:
        runpy.run_path(str(ROOT / "examples" / "scipy_tree.py"), run_name="__main__")
    finally:
        sys.argv = argv
    assert out.stat().st_size > 10_000
