"""Independent cross-check of `crosscheck stats` against scikit-learn, statsmodels, irrCAC and
direct numpy formulas, on random label tables generated with fixed seeds.

Run (from the repository root, after building the binary):

    CROSSCHECK_BIN=target/debug/crosscheck pytest tests/python

`CROSSCHECK_BIN` defaults to `target/debug/crosscheck` (relative to the repository root).

Conventions checked: a coefficient with a zero denominator is JSON null (numpy / sklearn
NaN); precision/recall are rater a's against reference b; macro averages skip undefined
classes (sklearn `zero_division=np.nan`).
"""

import collections
import csv
import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

try:  # optional: Gwet's own coefficient implementation
    import pandas as pd
    from irrCAC.table import CAC

    HAVE_IRRCAC = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_IRRCAC = False

# Third-party libraries warn on the degenerate tables this test generates on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")

TOL = 1e-9
REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("CROSSCHECK_BIN", "target/debug/crosscheck"))
if not BIN.is_absolute():
    BIN = REPO / BIN

POSITIVE = ["1", "yes", "Yes", "TRUE", "true", "YES"]
NEGATIVE = ["0", "no", "No", "FALSE", "false", "NO"]
TIERS = ["pass", "minor", "fail"]


# --------------------------------------------------------------------------------------------
# Running the binary


def run_stats(*args, expect_code=0):
    if not BIN.exists():
        pytest.fail(f"crosscheck binary not found at {BIN}; set CROSSCHECK_BIN")
    proc = subprocess.run(
        [str(BIN), "stats", *map(str, args)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == expect_code, (proc.returncode, proc.stderr)
    return proc


def stats_json(*args):
    return json.loads(run_stats(*args, "--format", "json").stdout)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


# --------------------------------------------------------------------------------------------
# Independent formulas (numpy) from category-index arrays


def matrix(a, b, q):
    m = np.zeros((q, q), dtype=np.int64)
    np.add.at(m, (a, b), 1)
    return m


def safe_div(num, den):
    return num / den if den != 0 else math.nan


def numpy_coefficients(a, b, q):
    m = matrix(a, b, q).astype(float)
    n = m.sum()
    po = np.trace(m) / n
    r, c = m.sum(axis=1) / n, m.sum(axis=0) / n
    pe_cohen = float((r * c).sum())
    pi = (r + c) / 2
    pe_scott = float((pi**2).sum())
    out = {
        "n": int(n),
        "po": po,
        "kappa": safe_div(po - pe_cohen, 1 - pe_cohen),
        "scott_pi": safe_div(po - pe_scott, 1 - pe_scott),
        "ac1": math.nan,
        "pabak": math.nan,
    }
    if q >= 2:
        pe_gwet = float((pi * (1 - pi)).sum()) / (q - 1)
        out["ac1"] = safe_div(po - pe_gwet, 1 - pe_gwet)
        out["pabak"] = (q * po - 1) / (q - 1)
    return out


def close(actual, expected, what):
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        assert actual is None, f"{what}: expected null, got {actual}"
    else:
        assert actual is not None, f"{what}: expected {expected}, got null"
        assert abs(actual - expected) <= TOL, f"{what}: {actual} != {expected}"


# --------------------------------------------------------------------------------------------
# Random tables


def random_binary_table(rng, n):
    prevalence = rng.choice([0.0, 0.03, 0.2, 0.5, 0.8, 0.97, 1.0])
    accuracy = rng.choice([0.3, 0.6, 0.85, 0.97, 1.0])
    b = (rng.random(n) < prevalence).astype(int)
    a = np.where(rng.random(n) < accuracy, b, 1 - b)
    return a, b


def spell(value, rng):
    return str(rng.choice(POSITIVE if value else NEGATIVE))


BINARY_CASES = list(range(30))


@pytest.mark.parametrize("case", BINARY_CASES)
def test_binary_coefficients_match_sklearn_statsmodels_numpy(case, tmp_path):
    rng = np.random.default_rng(1000 + case)
    n = int(rng.choice([1, 2, 5, 20, 60, 250]))
    a, b = random_binary_table(rng, n)
    rows, skipped = [], 0
    for i in range(n):
        rows.append([i, spell(a[i], rng), spell(b[i], rng)])
    # Rows with a missing label in either column are skipped and counted.
    for i in range(int(rng.integers(0, 4))):
        rows.insert(int(rng.integers(0, len(rows) + 1)), [f"m{i}", "", spell(1, rng)])
        skipped += 1
    path = write_csv(tmp_path / "labels.csv", ["item", "llm", "human"], rows)
    got = stats_json("--input", path, "--a", "llm", "--b", "human", "--bootstrap", 0)

    assert got["mode"] == "binary" and got["q"] == 2
    assert got["skipped"] == skipped
    want = numpy_coefficients(a, b, 2)
    assert got["n"] == want["n"] == n
    for key in ["po", "kappa", "scott_pi", "ac1", "pabak"]:
        close(got[key], want[key], key)

    # scikit-learn and statsmodels kappa.
    close(got["kappa"], cohen_kappa_score(a, b, labels=[0, 1]), "kappa (sklearn)")
    if got["kappa"] is not None:
        close(got["kappa"], sm_cohens_kappa(matrix(a, b, 2)).kappa, "kappa (statsmodels)")

    # Precision / recall / F1 of a against reference b.
    p, r, f, _ = precision_recall_fscore_support(
        b, a, labels=[0, 1], pos_label=1, average="binary", zero_division=np.nan
    )
    close(got["precision"], p, "precision")
    close(got["recall"], r, "recall")
    close(got["f1"], f, "f1")
    _, _, macro_f, _ = precision_recall_fscore_support(
        b, a, labels=[0, 1], average="macro", zero_division=np.nan
    )
    close(got["macro_f1"], macro_f, "macro_f1")

    # Decision gap: accuracy on reference negatives minus on reference positives.
    acc_pos = safe_div(float(((a == 1) & (b == 1)).sum()), float((b == 1).sum()))
    acc_neg = safe_div(float(((a == 0) & (b == 0)).sum()), float((b == 0).sum()))
    close(got["acc_pos"], acc_pos, "acc_pos")
    close(got["acc_neg"], acc_neg, "acc_neg")
    close(got["gap"], acc_neg - acc_pos, "gap")

    if HAVE_IRRCAC and got["ac1"] is not None:
        table = pd.DataFrame(matrix(a, b, 2), index=["0", "1"], columns=["0", "1"])
        ac1 = CAC(table, digits=15).gwet()["est"]["coefficient_value"]
        close(got["ac1"], float(ac1), "ac1 (irrCAC)")

    # Every null comes with a note.
    nulls = [k for k in ["kappa", "scott_pi", "precision", "recall", "f1"] if got[k] is None]
    for key in nulls:
        assert any(note.startswith(f"{key} is null") for note in got["notes"]), (key, got["notes"])


MULTI_CASES = list(range(25))


@pytest.mark.parametrize("case", MULTI_CASES)
def test_three_class_coefficients_match(case, tmp_path):
    rng = np.random.default_rng(2000 + case)
    n = int(rng.choice([1, 3, 15, 80, 300]))
    weights = rng.dirichlet([0.7, 0.7, 0.7])
    b = rng.choice(3, size=n, p=weights)
    accuracy = rng.choice([0.2, 0.6, 0.9, 1.0])
    a = np.where(rng.random(n) < accuracy, b, rng.choice(3, size=n))
    # Declared categories: sometimes the three tiers, sometimes with an unused fourth one,
    # sometimes none (then q = number of observed labels).
    mode = case % 3
    if mode == 0:
        declared = None
        observed = sorted({TIERS[i] for i in np.concatenate([a, b])})
        cats = observed
    elif mode == 1:
        declared = TIERS
        cats = TIERS
    else:
        declared = TIERS + ["unsure"]
        cats = declared
    index = {c: i for i, c in enumerate(cats)}
    ai = np.array([index[TIERS[x]] for x in a])
    bi = np.array([index[TIERS[x]] for x in b])
    q = len(cats)

    lines = [json.dumps({"id": i, "llm": TIERS[a[i]], "human": TIERS[b[i]]}) for i in range(n)]
    lines.append(json.dumps({"id": "missing", "llm": None, "human": "pass"}))
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n")
    args = ["--input", path, "--a", "llm", "--b", "human", "--bootstrap", 0]
    if declared:
        args += ["--categories", ",".join(declared)]
    got = stats_json(*args)

    assert got["mode"] == "multiclass"
    assert got["q"] == q and got["categories"] == cats
    assert got["skipped"] == 1
    want = numpy_coefficients(ai, bi, q)
    for key in ["n", "po", "kappa", "scott_pi", "ac1", "pabak"]:
        close(got[key], want[key], key)
    close(got["kappa"], cohen_kappa_score(ai, bi, labels=list(range(q))), "kappa (sklearn)")
    if got["kappa"] is not None:
        close(got["kappa"], sm_cohens_kappa(matrix(ai, bi, q)).kappa, "kappa (statsmodels)")
    if HAVE_IRRCAC and got["ac1"] is not None:
        table = pd.DataFrame(matrix(ai, bi, q), index=cats, columns=cats)
        close(got["ac1"], float(CAC(table, digits=15).gwet()["est"]["coefficient_value"]), "ac1 (irrCAC)")

    p, r, f, support = precision_recall_fscore_support(
        bi, ai, labels=list(range(q)), average=None, zero_division=np.nan
    )
    for k, cls in enumerate(got["per_class"]):
        assert cls["label"] == cats[k]
        close(cls["precision"], p[k], f"precision[{cats[k]}]")
        close(cls["recall"], r[k], f"recall[{cats[k]}]")
        close(cls["f1"], f[k], f"f1[{cats[k]}]")
        assert cls["support"] == support[k]
    for avg_key, idx in [("macro_precision", 0), ("macro_recall", 1), ("macro_f1", 2)]:
        want_macro = precision_recall_fscore_support(
            bi, ai, labels=list(range(q)), average="macro", zero_division=np.nan
        )[idx]
        close(got[avg_key], want_macro, avg_key)
    for key in ["precision", "recall", "f1", "gap"]:
        assert got[key] is None


MCNEMAR_CASES = list(range(20))


@pytest.mark.parametrize("case", MCNEMAR_CASES)
def test_mcnemar_matches_statsmodels(case, tmp_path):
    rng = np.random.default_rng(3000 + case)
    n = int(rng.choice([5, 20, 40, 120, 500]))
    truth = rng.integers(0, 2, size=n)
    acc_a, acc_b = rng.uniform(0.4, 1.0, size=2)
    a = np.where(rng.random(n) < acc_a, truth, 1 - truth)
    b = np.where(rng.random(n) < acc_b, truth, 1 - truth)
    rows = [[i, a[i], b[i], truth[i]] for i in range(n)]
    path = write_csv(tmp_path / "paired.csv", ["item", "a", "b", "truth"], rows)
    got = stats_json("--mcnemar", "--input", path, "--a", "a", "--b", "b", "--truth", "truth")

    ca, cb = a == truth, b == truth
    table = np.array(
        [[int((ca & cb).sum()), int((ca & ~cb).sum())], [int((~ca & cb).sum()), int((~ca & ~cb).sum())]]
    )
    discordant = int(table[0, 1] + table[1, 0])
    exact = discordant < 25
    ref = sm_mcnemar(table, exact=exact, correction=True)
    assert got["discordant"] == discordant
    assert got["a_only_correct"] == table[0, 1] and got["b_only_correct"] == table[1, 0]
    assert got["method"] == ("exact_binomial" if exact else "chi_square_corrected")
    close(got["statistic"], float(ref.statistic), "statistic")
    close(got["p_value"], float(ref.pvalue), "p_value")


def test_bootstrap_ci_defaults_and_agrees_with_numpy_bootstrap(tmp_path):
    rng = np.random.default_rng(4000)
    n = 200
    b = (rng.random(n) < 0.4).astype(int)
    a = np.where(rng.random(n) < 0.85, b, 1 - b)
    path = write_csv(tmp_path / "ci.csv", ["a", "b"], [[x, y] for x, y in zip(a, b)])
    got = stats_json("--input", path, "--a", "a", "--b", "b")
    ci = got["ci"]
    assert ci["resamples"] == 10_000 and ci["seed"] == 0x5EED and ci["method"] == "percentile"
    assert ci["level"] == 0.95

    # An independent percentile bootstrap with numpy's generator: the Monte Carlo error of a
    # 2.5% / 97.5% quantile with 10,000 resamples is about 0.002 here, so 0.01 is > 4 SE.
    boot = np.random.default_rng(7)
    kappas, ac1s, pabaks, f1s = [], [], [], []
    for _ in range(10_000):
        idx = boot.integers(0, n, size=n)
        coeffs = numpy_coefficients(a[idx], b[idx], 2)
        kappas.append(coeffs["kappa"])
        ac1s.append(coeffs["ac1"])
        pabaks.append(coeffs["pabak"])
        tp = float(((a[idx] == 1) & (b[idx] == 1)).sum())
        fp = float(((a[idx] == 1) & (b[idx] == 0)).sum())
        fn = float(((a[idx] == 0) & (b[idx] == 1)).sum())
        f1s.append(safe_div(2 * tp, 2 * tp + fp + fn))
    for key, values in [("kappa", kappas), ("ac1", ac1s), ("pabak", pabaks), ("f1", f1s)]:
        values = np.array([v for v in values if not math.isnan(v)])
        lo, hi = np.percentile(values, [2.5, 97.5])
        assert abs(ci[key]["lo"] - lo) < 0.01, (key, ci[key], lo)
        assert abs(ci[key]["hi"] - hi) < 0.01, (key, ci[key], hi)
        assert ci[key]["lo"] <= got[key] <= ci[key]["hi"]

    # Same seed twice: identical; another seed: different.
    again = stats_json("--input", path, "--a", "a", "--b", "b")
    assert again["ci"] == ci
    other = stats_json("--input", path, "--a", "a", "--b", "b", "--seed", "1")
    assert other["ci"]["kappa"] != ci["kappa"]


def test_instability_matches_direct_count(tmp_path):
    rng = np.random.default_rng(5000)
    n, runs = 150, 3
    truth = rng.integers(0, 2, size=n)
    verdicts = np.where(rng.random((n, runs)) < 0.9, truth[:, None], 1 - truth[:, None])
    rows = [[i, *(spell(v, rng) for v in verdicts[i])] for i in range(n)]
    rows.append(["incomplete", "yes", "", "no"])
    path = write_csv(tmp_path / "runs.csv", ["item", "r1", "r2", "r3"], rows)
    got = stats_json("--instability", "--input", path, "--runs", "r1,r2,r3")
    top = np.array([collections.Counter(row).most_common(1)[0][1] for row in verdicts.tolist()])
    assert got["n"] == n and got["skipped"] == 1 and got["runs"] == runs
    assert got["unstable"] == int((top < runs).sum())
    close(got["unstable_share"], float((top < runs).mean()), "unstable_share")
    close(got["mean_disagreement"], float((1 - top / runs).mean()), "mean_disagreement")


def test_jaccard_matches_python_sets(tmp_path):
    rng = np.random.default_rng(6000)
    universe = [f"f{i}" for i in range(8)]
    lines, pairs = [], []
    for i in range(60):
        x = sorted(set(rng.choice(universe, size=int(rng.integers(0, 5)))))
        y = sorted(set(rng.choice(universe, size=int(rng.integers(0, 5)))))
        lines.append(json.dumps({"id": i, "llm": x, "callgraph": y}))
        pairs.append((set(x), set(y)))
    path = tmp_path / "sets.jsonl"
    path.write_text("\n".join(lines) + "\n")
    got = stats_json("--jaccard", "--input", path, "--a", "llm", "--b", "callgraph")
    defined = [len(x & y) / len(x | y) for x, y in pairs if x | y]
    close(got["mean"], float(np.mean(defined)), "mean")
    close(
        got["micro"],
        sum(len(x & y) for x, y in pairs) / sum(len(x | y) for x, y in pairs),
        "micro",
    )
    assert got["both_empty"] == sum(1 for x, y in pairs if not (x | y))


def test_empty_input_exits_2(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    proc = run_stats("--input", path, "--a", "a", "--b", "b", expect_code=2)
    assert "empty" in proc.stderr
