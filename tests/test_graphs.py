"""warplint/graphs.py against networkx on random directed graphs: the same results, and dicts in
the same order (the analysis iterates some of them, and its output must not move)."""
import random

import pytest

from warplint import graphs

nx = pytest.importorskip("networkx")


def _random_graph(rng: random.Random):
    n = rng.randint(1, 14)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for _ in range(rng.randint(0, 3 * n)):
        g.add_edge(rng.randrange(n), rng.randrange(n))
    return g


def _adjacency(g):
    return {u: list(g.succ[u]) for u in g}, {u: list(g.pred[u]) for u in g}


@pytest.mark.parametrize("seed", range(300))
def test_same_as_networkx(seed):
    rng = random.Random(seed)
    g = _random_graph(rng)
    succ, pred = _adjacency(g)
    start = rng.randrange(len(g))
    assert graphs.postorder(succ, start) == list(nx.dfs_postorder_nodes(g, start))
    assert graphs.descendants(succ, start) == nx.descendants(g, start)
    idom = graphs.immediate_dominators(succ, pred, start)
    assert list(idom.items()) == [(u, v) for u, v in nx.immediate_dominators(g, start).items() if u != start]
    frontiers = graphs.dominance_frontiers(succ, pred, start)
    expected = nx.dominance_frontiers(g, start)
    assert list(frontiers) == list(expected) and all(frontiers[u] == set(expected[u]) for u in expected)
    assert sorted(map(sorted, graphs.strongly_connected_components(succ))) == \
        sorted(map(sorted, nx.strongly_connected_components(g)))


def test_self_loop_and_long_chain():
    chain = {i: [i + 1] for i in range(5000)} | {5000: [5000]}  # deep: no recursion limit
    assert graphs.postorder(chain, 0)[0] == 5000
    assert {5000} in graphs.strongly_connected_components(chain)
    assert len(graphs.strongly_connected_components(chain)) == 5001
