"""The accountant's running sums (``accounting.ledger.Ledger``) against a from-scratch composition."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpselect import Privacy
from dpselect.accounting import Accountant, BudgetExceededError, br_adaptive_epsilon, pure_composition_epsilon
from dpselect.accounting.bounded_range import _br_with_pure_epsilon
from dpselect.accounting.composition import br_kl_bound, zcdp_epsilon
from dpselect.accounting.ledger import Ledger, _ExactSum
from dpselect.accounting.optimal import _groups


def _reference(charges: list[Privacy], delta: float) -> tuple[float, float]:
    """compose_privacy's five routes recomputed from lists of atoms with math.fsum (no running sums)."""
    atoms = [a for c in charges for a in c.atoms]
    plain = [a for a in atoms if a.bounded_range is None and a.rho is None]
    br = [a for a in atoms if a.bounded_range is not None]
    etas = [a.bounded_range for a in br]
    zc = [a for a in atoms if a.bounded_range is None and a.rho is not None]
    eps_plain = math.fsum(a.epsilon for a in plain)
    fixed = math.fsum(a.delta for a in plain) + math.fsum(a.delta for a in br)
    routes = [(math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))]
    slack, delta_z = max(delta - fixed, 0.0), math.fsum(a.delta for a in zc)
    while slack > 0 and fixed + slack > delta:
        slack = math.nextafter(slack, 0.0)
    rho = math.fsum([e * e / 8.0 for e in etas] + [a.rho for a in zc])

    def ddr(d: float, recursion: bool = True) -> float:
        spread = math.sqrt(0.5 * math.fsum(e * e for e in etas) * -math.log(d))
        best = min(math.fsum(etas), math.fsum(br_kl_bound(e) for e in etas) + spread)
        if recursion and len(set(etas)) == 1 and etas[0] > 0 and len(etas) >= 2:  # one eta: the recursion too
            best = min(best, br_adaptive_epsilon(etas[0], len(etas), d))
        return math.fsum(a.epsilon for a in zc) + best

    for d in {x for x in (slack, delta_z) if x > 0.0 and (br or zc)}:
        routes.append((eps_plain + zcdp_epsilon(rho, d), fixed + d))
    if br and slack - delta_z > 0.0:
        routes.append((eps_plain + min(ddr(slack - delta_z), zcdp_epsilon(rho, slack)), fixed + slack))
    pure = [a.epsilon for a in plain if a.delta == 0.0]
    if len(pure) >= 2 and slack > 0.0:
        rho_all = rho + math.fsum(e * e / 2.0 for e in pure)
        eps_approx = math.fsum(a.epsilon for a in plain if a.delta > 0)
        routes.append((eps_approx + zcdp_epsilon(rho_all, slack), fixed + slack))
    if len([a for a in plain if a.epsilon > 0]) >= 2 and slack > 0.0:
        for share in (0.5, 0.9, 0.1, 0.99, 0.01) if br or zc else (1.0,):
            cert = 0.0
            if br or zc:
                cert = zcdp_epsilon(rho, slack - slack * share)
                if br and slack - slack * share - delta_z > 0:
                    cert = min(cert, ddr(slack - slack * share - delta_z, False))
            routes.append((pure_composition_epsilon([a.epsilon for a in plain], slack * share) + cert, fixed + slack))
    plain_eps = sorted({a.epsilon for a in plain if a.epsilon > 0})
    if plain_eps and len(set(etas)) == 1 and etas[0] > 0 and slack - delta_z > 0 and not math.isinf(plain_eps[-1]):
        groups = _groups((e, sum(a.epsilon == e for a in plain)) for e in plain_eps)
        eps_all = _br_with_pure_epsilon(etas[0], len(etas), groups, slack - delta_z)
        routes.append((math.fsum(a.epsilon for a in zc) + eps_all, fixed + slack))
    within = [r for r in routes if r[1] <= delta] or routes
    least = min(r[0] for r in within)
    return min((r for r in within if r[0] <= least * (1 + 1e-9)), key=lambda r: (r[1], r[0]))


def _random_charge(gen: np.random.Generator, pure: bool) -> Privacy:
    kind = int(gen.choice([0, 1, 3] if pure else [0, 1, 2, 3]))
    eps = float(gen.choice([1e-3, 0.05, 0.3, 1.0]) * gen.uniform(0.5, 1.5))
    if kind == 0:
        return Privacy(eps, bounded_range=eps)  # an exponential mechanism
    if kind == 1:
        return Privacy(eps, 0.0 if pure else float(gen.choice([0.0, 1e-9])))  # uncertified
    if kind == 2:
        rho = eps * eps / 2.0
        return Privacy(rho + 2 * math.sqrt(rho * math.log(1e8)), 1e-8, rho=rho)  # a zCDP release
    return Privacy(eps, bounded_range=eps) + Privacy(eps / 2, bounded_range=eps / 2)  # a composed charge


@pytest.mark.parametrize("delta", [0.0, 1e-6, 1e-3, 0.5])
@pytest.mark.parametrize("seed", range(4))
def test_ledger_equals_composition_from_scratch(seed, delta):
    gen = np.random.default_rng(seed)
    acc = Accountant(math.inf, delta=delta, composition="tight")
    charges = []
    for _ in range(60):
        c = _random_charge(gen, pure=delta < 1e-3)
        acc.spend(c)
        charges.append(c)
        eps, dlt = _reference(charges, delta)
        assert acc.spent.epsilon == pytest.approx(eps, rel=1e-12, abs=1e-15)
        assert acc.spent.delta == pytest.approx(dlt, rel=1e-12, abs=1e-300)
    assert Accountant.compose(charges, delta).epsilon == pytest.approx(_reference(charges, delta)[0], rel=1e-12)


def test_exact_sum_is_correctly_rounded_and_inf_absorbs():
    gen = np.random.default_rng(0)
    xs = np.concatenate([gen.uniform(0, 1, 500) * 10.0 ** gen.integers(-20, 20, 500), [1e16, 1.0, 1e-16]])
    s = _ExactSum()
    for i, x in enumerate(xs):
        s.add(float(x))
        if i % 50 == 0:
            assert s.value == math.fsum(xs[: i + 1])
    assert s.value == math.fsum(xs)
    naive = 0.0
    for x in (1e16, 1.0, 1.0):
        naive += x
    t = _ExactSum()
    for x in (1e16, 1.0, 1.0):
        t.add(x)
    assert t.value == 1e16 + 2.0 != naive  # plain += loses both 1.0s; the ledger does not
    t.add(math.inf)
    assert t.value == math.inf


def test_refused_charge_leaves_the_ledger_unchanged_and_relations_do_not_mix():
    acc = Accountant(1.0, delta=1e-6)
    acc.spend(Privacy(0.6, relation="add_remove"))
    before = acc.spent
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.6))
    with pytest.raises(ValueError, match="relations"):
        acc.spend(Privacy(0.1, relation="replace"))
    assert acc.spent == before and len(acc.charges) == 1
    ledger = Ledger().add(Privacy(0.1, relation="replace"))
    with pytest.raises(ValueError, match="relations"):
        ledger.add(Privacy(0.1, relation="add_remove"))
    assert ledger.compose().relation == "replace"


def test_basic_accountant_ignores_certificates():
    acc = Accountant(10.0, delta=1e-6, composition="basic")
    for _ in range(100):
        acc.spend(Privacy(0.05, bounded_range=0.05))
    assert acc.spent.epsilon == pytest.approx(5.0, rel=1e-12) and acc.spent.delta == 0.0
