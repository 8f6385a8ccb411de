//! The analyzer side of the `taint` task: the taint analysis's tainted variables of a function
//! (`analysis::taint`), with the function's variables from data dependency as the question set.

use super::facts::{TaintFacts, TaintOracle};
use crate::analysis::dataflow::analyze_data_flow;
use crate::analysis::taint::analyze_file;
use crate::syntax::functions::Function;
use crate::syntax::{Cancel, ParsedFile};

/// [`TaintOracle`] backed by the deterministic taint analysis.
#[derive(Debug, Default, Clone, Copy)]
pub struct AnalyzerTaint;

impl TaintOracle for AnalyzerTaint {
    fn taint_facts(
        &self,
        path: &str,
        file: &ParsedFile,
        func: &Function<'_>,
        cancel: &Cancel,
    ) -> Option<TaintFacts> {
        let result = analyze_file(path, file, cancel);
        let flow = analyze_data_flow(file, func, cancel);
        let mut facts = TaintFacts {
            partial: result.partial || flow.partial,
            ..TaintFacts::default()
        };
        for (var, deps) in &flow.dependencies {
            facts.variables.insert(var.clone());
            facts.variables.extend(deps.iter().cloned());
        }
        for v in result.tainted_variables_for(path) {
            if v.function.as_deref() == Some(func.name.as_str()) {
                facts.tainted.insert(v.var.clone());
                facts.variables.insert(v.var.clone());
            }
        }
        let range = func.start_line..=func.end_line;
        for f in &result.flows {
            if f.source.file == path
                && range.contains(&f.source.line)
                && !facts.sources.contains(&f.source.text)
            {
                facts.sources.push(f.source.text.clone());
            }
        }
        Some(facts)
    }
}
