"""Top-k keys without a candidate list and the ``dpselect keys`` command (mathematics §16)."""

from __future__ import annotations

import numpy as np
import pytest

from dpselect import Accountant
from dpselect.apps.counts import TopKeys, select_top_k_keys

USERS = [["a", "b"]] * 300 + [["b"]] * 200 + [["c"]] * 120 + [["d", "e"]] * 40 + [["lone1", "lone2"]]


def test_top_k_keys_most_frequent_first() -> None:
    hits = 0
    for seed in range(20):
        res = select_top_k_keys(USERS, 2.0, 1e-6, 2, max_contributions=2, rng=seed)
        assert isinstance(res, TopKeys) and res.counts is None and len(res.keys) <= 2
        assert "lone1" not in res.keys and "lone2" not in res.keys
        hits += res.keys == ("b", "a")
    assert hits >= 18  # gaps of 200 users at epsilon/k = 0.5 per round: errors are rare


def test_counts_only_when_asked_and_charged() -> None:
    acc = Accountant(5.0, delta=1e-5)
    res = select_top_k_keys(
        USERS, 2.0, 1e-6, 3, max_contributions=2, return_counts=True, count_epsilon=1.0, rng=1, accountant=acc
    )
    assert res.counts is not None and res.counts.shape == (len(res.keys),)
    true = {"a": 300, "b": 500, "c": 120}
    assert all(abs(c - true[k]) < 30 for k, c in zip(res.keys, res.counts, strict=True))
    assert acc.spent.epsilon == pytest.approx(3.0) and acc.spent.delta == pytest.approx(1e-6)
    assert res.privacy.epsilon == pytest.approx(3.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"return_counts": True},
        {"count_epsilon": 1.0},
        {"k": 0},
        {"selection_share": 1.0},
        {"epsilon": float("nan")},
        {"delta": 0.0},
    ],
)
def test_bad_arguments_before_randomness(kwargs: dict) -> None:
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    args = dict(user_items=USERS, epsilon=1.0, delta=1e-6, k=2, max_contributions=2, rng=gen)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError)):
        select_top_k_keys(**args)
    assert gen.bit_generator.state == state


def test_nothing_released_gives_empty() -> None:
    res = select_top_k_keys([["x"], ["y"]], 1.0, 1e-6, 2, max_contributions=1, rng=0)
    assert res.keys == ()


# ----------------------------------------------------------------------------- the command line


def _csv(tmp_path, users) -> str:
    path = tmp_path / "uk.csv"
    lines = ["user,item"] + [f"{i},{k}" for i, u in enumerate(users) for k in u]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(argv, capsys):
    from dpselect.cli import main

    code = main(["keys", *[str(a) for a in argv]])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_prints_keys_only(tmp_path, capsys) -> None:
    path = _csv(tmp_path, USERS)
    base = [path, "--user-column", "user", "--key-column", "item", "--epsilon", "1", "--delta", "1e-6"]
    code, out, err = _run([*base, "--max-contributions", "2", "--seed", "3"], capsys)
    assert code == 0 and out.split() == ["a", "b", "c", "d", "e"]
    assert "DP" in err and "300" not in err + out
    code, out, _ = _run([*base, "--max-contributions", "2", "--k", "2", "--seed", "3"], capsys)
    assert code == 0 and out.split() == ["b", "a"]


def test_cli_neighbours_exit_alike_and_bad_options_first(tmp_path, capsys) -> None:
    without = _csv(tmp_path, USERS[:-1])
    base = ["--user-column", "user", "--key-column", "item", "--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    code_a, out_a, _ = _run([without, *base], capsys)
    code_b, out_b, _ = _run([_csv(tmp_path, USERS), *base], capsys)
    assert code_a == code_b == 0 and out_a == out_b  # the lone user's keys stay out
    code, _, err = _run(["missing.csv", *base[:-4], "--delta", "0", "--seed", "0"], capsys)
    assert code == 2 and "--delta" in err  # checked before the (missing) file is read
    code, _, err = _run([without, *base, "--max-contributions", "0"], capsys)
    assert code == 2 and "--max-contributions" in err
    code, _, err = _run([without, "--user-column", "nope", *base[2:]], capsys)
    assert code == 2 and "--user-column" in err
