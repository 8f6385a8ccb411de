//! The full two-rater agreement report behind `crosscheck stats`.

use serde::Serialize;

use super::agreement::{
    self, agreement, decision_bias, macro_scores, per_class, ClassScores, Confusion, Tally,
};
use super::bootstrap::{bootstrap, BootstrapOptions, ConfidenceInterval};
use super::labels::LabelledPairs;
use super::short_label;
use crate::syntax::Cancel;

/// The confusion matrix is included only up to this many categories.
pub const CONFUSION_LIMIT: usize = 64;

/// Options for [`compute`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StatsOptions {
    pub bootstrap: BootstrapOptions,
}

/// Bootstrap confidence intervals for the headline coefficients.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CiReport {
    pub method: &'static str,
    pub level: f64,
    pub resamples: usize,
    /// Resamples drawn (less than `resamples` only if cancelled).
    pub completed: usize,
    pub seed: u64,
    pub kappa: ConfidenceInterval,
    pub ac1: ConfidenceInterval,
    pub pabak: ConfidenceInterval,
    /// F1 of the positive class (binary) or macro F1 (multi-class).
    pub f1: ConfidenceInterval,
}

/// Agreement of rater a with reference b. The first nine fields are the stable contract;
/// later fields are extras. `None` serialises as `null` and is explained in `notes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    pub n: u64,
    pub po: Option<f64>,
    pub kappa: Option<f64>,
    pub scott_pi: Option<f64>,
    pub ac1: Option<f64>,
    pub pabak: Option<f64>,
    /// Binary only (rater a against b, positive class); `null` for multi-class.
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// Rows skipped for a missing/empty label.
    pub skipped: usize,
    /// `"binary"` or `"multiclass"`.
    pub mode: &'static str,
    pub q: usize,
    pub categories: Vec<String>,
    /// Accuracy on reference-positive items (binary only).
    pub acc_pos: Option<f64>,
    /// Accuracy on reference-negative items (binary only).
    pub acc_neg: Option<f64>,
    /// `acc_neg - acc_pos`.
    pub gap: Option<f64>,
    pub macro_precision: Option<f64>,
    pub macro_recall: Option<f64>,
    pub macro_f1: Option<f64>,
    pub per_class: Vec<ClassScores>,
    /// Rows = rater a, columns = reference b; `null` beyond [`CONFUSION_LIMIT`] categories.
    pub confusion: Option<Confusion>,
    /// `null` when the bootstrap is disabled or there are no items.
    pub ci: Option<CiReport>,
    pub notes: Vec<String>,
}

/// The statistics the bootstrap resamples: kappa, AC1, PABAK and F1 (binary) / macro F1.
fn resampled_statistics(binary: bool) -> impl Fn(&Tally) -> [Option<f64>; 4] {
    move |t: &Tally| {
        let a = agreement(t);
        let f1 = if binary {
            agreement::class_scores(t, 1, "").f1
        } else {
            agreement::macro_f1(t)
        };
        [a.kappa, a.ac1, a.pabak, f1]
    }
}

/// Computes the report. Pure and deterministic; `cancel` cuts the bootstrap short (the
/// partial intervals are reported with a note).
pub fn compute(pairs: &LabelledPairs, options: &StatsOptions, cancel: &Cancel) -> StatsReport {
    let space = &pairs.space;
    let q = space.q();
    let binary = space.binary;
    let tally = Tally::from_pairs(q, &pairs.pairs);
    let n = tally.n();
    let coeffs = agreement(&tally);
    let classes = per_class(&tally, &space.categories);
    let macros = macro_scores(&classes);
    let positive = if binary { classes.get(1) } else { None };
    let bias = decision_bias(&tally);
    let bias = if binary {
        bias
    } else {
        agreement::DecisionBias {
            acc_pos: None,
            acc_neg: None,
            gap: None,
        }
    };
    let mut notes = pairs.notes.clone();

    // Explain every null.
    let explain = |notes: &mut Vec<String>, name: &str, value: Option<f64>, why: &str| {
        if value.is_none() {
            notes.push(format!("{name} is null: {why}"));
        }
    };
    if n == 0 {
        notes.push("no items: every coefficient is null".to_string());
    } else {
        let single = "chance agreement Pe = 1 (both raters used one and the same category), \
                      so 1 - Pe = 0";
        explain(&mut notes, "kappa", coeffs.kappa, single);
        explain(&mut notes, "scott_pi", coeffs.scott_pi, single);
        let q_small = "needs q >= 2 categories (1 - Pe and q - 1 are 0)";
        explain(&mut notes, "ac1", coeffs.ac1, q_small);
        explain(&mut notes, "pabak", coeffs.pabak, q_small);
        if binary {
            explain(
                &mut notes,
                "precision",
                positive.and_then(|c| c.precision),
                "rater a labelled no item positive (TP + FP = 0)",
            );
            explain(
                &mut notes,
                "recall",
                positive.and_then(|c| c.recall),
                "the reference has no positive item (TP + FN = 0)",
            );
            explain(
                &mut notes,
                "f1",
                positive.and_then(|c| c.f1),
                "neither rater labelled any item positive (2TP + FP + FN = 0)",
            );
            explain(
                &mut notes,
                "acc_pos",
                bias.acc_pos,
                "the reference has no positive item",
            );
            explain(
                &mut notes,
                "acc_neg",
                bias.acc_neg,
                "the reference has no negative item",
            );
            explain(
                &mut notes,
                "gap",
                bias.gap,
                "needs both acc_pos and acc_neg",
            );
        } else {
            notes.push(
                "precision, recall, f1, acc_pos, acc_neg and gap are binary-only and null for \
                 multi-class labels; see per_class and macro_precision / macro_recall / macro_f1"
                    .to_string(),
            );
        }
        let undefined: Vec<&str> = classes
            .iter()
            .filter(|c| c.precision.is_none() || c.recall.is_none() || c.f1.is_none())
            .map(|c| c.label.as_str())
            .collect();
        if !undefined.is_empty() {
            const SHOWN: usize = 10;
            let mut names = undefined
                .iter()
                .take(SHOWN)
                .map(|l| short_label(l))
                .collect::<Vec<_>>()
                .join(", ");
            if undefined.len() > SHOWN {
                names.push_str(&format!(" and {} more", undefined.len() - SHOWN));
            }
            notes.push(format!(
                "per_class has nulls for {names}: the class is never predicted by a (precision) \
                 or absent from the reference b (recall); macro averages skip undefined classes"
            ));
        }
        explain(
            &mut notes,
            "macro_f1",
            macros.f1,
            "no class has a defined F1",
        );
    }

    let ci = if n > 0 && options.bootstrap.resamples > 0 {
        let run = bootstrap(
            q,
            &pairs.pairs,
            &options.bootstrap,
            resampled_statistics(binary),
            cancel,
        );
        if run.completed < options.bootstrap.resamples {
            notes.push(format!(
                "bootstrap cancelled after {} of {} resamples",
                run.completed, options.bootstrap.resamples
            ));
        }
        let [kappa, ac1, pabak, f1] = run.intervals;
        for (name, ci) in [
            ("kappa", &kappa),
            ("ac1", &ac1),
            ("pabak", &pabak),
            ("f1", &f1),
        ] {
            if ci.valid < run.completed {
                notes.push(format!(
                    "ci.{name}: the statistic was undefined on {} of {} resamples, which were dropped",
                    run.completed - ci.valid,
                    run.completed
                ));
            }
        }
        Some(CiReport {
            method: "percentile",
            level: options.bootstrap.level,
            resamples: options.bootstrap.resamples,
            completed: run.completed,
            seed: options.bootstrap.seed,
            kappa,
            ac1,
            pabak,
            f1,
        })
    } else {
        None
    };

    let confusion = if q <= CONFUSION_LIMIT {
        Some(Confusion::from_pairs(&space.categories, &pairs.pairs))
    } else {
        notes.push(format!(
            "confusion matrix omitted: q = {q} > {CONFUSION_LIMIT} categories"
        ));
        None
    };

    StatsReport {
        n,
        po: coeffs.po,
        kappa: coeffs.kappa,
        scott_pi: coeffs.scott_pi,
        ac1: coeffs.ac1,
        pabak: coeffs.pabak,
        precision: positive.and_then(|c| c.precision),
        recall: positive.and_then(|c| c.recall),
        f1: positive.and_then(|c| c.f1),
        skipped: pairs.skipped,
        mode: if binary { "binary" } else { "multiclass" },
        q,
        categories: space.categories.clone(),
        acc_pos: bias.acc_pos,
        acc_neg: bias.acc_neg,
        gap: bias.gap,
        macro_precision: macros.precision,
        macro_recall: macros.recall,
        macro_f1: macros.f1,
        per_class: classes,
        confusion,
        ci,
        notes,
    }
}
