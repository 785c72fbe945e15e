//! `check --statistics`: a count per rule code instead of each finding, as ruff prints it
//! (astral-sh/ruff `crates/ruff/src/printer.rs`, `write_statistics`): the count right-aligned,
//! the code, `[*]` when `fix` repairs findings of that rule (`[ ]` otherwise; neither when no
//! rule is fixable), and the rule's title, one rule a line, the most frequent first.

#[cfg(test)]
use super::report::Located;
use crate::finding::{Finding, Rule};

/// One rule's count.
struct Count {
    rule: Rule,
    count: usize,
    fixable: bool,
}

/// The counts per rule of the findings of a run, taken as they come.
#[derive(Default)]
pub(crate) struct Tally {
    by_rule: Vec<Count>,
}

impl Tally {
    /// Counts one finding.
    pub(crate) fn add(&mut self, f: &Finding) {
        match self.by_rule.iter_mut().find(|c| c.rule == f.rule) {
            Some(c) => {
                c.count += 1;
                c.fixable |= f.fixed;
            }
            None => self.by_rule.push(Count {
                rule: f.rule,
                count: 1,
                fixable: f.fixed,
            }),
        }
    }

    /// The counts: by count, most first, then by code.
    fn counts(&self) -> Vec<&Count> {
        let mut by_rule: Vec<&Count> = self.by_rule.iter().collect();
        by_rule.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(&b.rule)));
        by_rule
    }

    /// The lines for stderr, each ending in `\n`; empty when there is no finding.
    pub(crate) fn text(&self) -> String {
        let counts = self.counts();
        let width = counts.iter().map(|c| c.count.to_string().len()).max();
        let any_fixable = counts.iter().any(|c| c.fixable);
        let mut out = String::new();
        for c in &counts {
            let mark = match (any_fixable, c.fixable) {
                (false, _) => "",
                (true, true) => "[*] ",
                (true, false) => "[ ] ",
            };
            let info = c.rule.info();
            out.push_str(&format!(
                "{:>w$}\t{}\t{mark}{}\n",
                c.count,
                info.code,
                info.title,
                w = width.unwrap_or(1)
            ));
        }
        out
    }

    /// The `statistics` list of the JSON report: `{code, title, count, fixable}` per rule.
    pub(crate) fn json(&self) -> serde_json::Value {
        (self.counts().iter())
            .map(|c| {
                serde_json::json!({
                    "code": c.rule.code(),
                    "title": c.rule.info().title,
                    "count": c.count,
                    "fixable": c.fixable,
                })
            })
            .collect()
    }
}

/// The lines for stderr of the findings in `reports` ([`Tally::text`]).
#[cfg(test)]
fn text(reports: &[Located]) -> String {
    let mut t = Tally::default();
    for l in reports {
        t.add(&l.finding);
    }
    t.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(f: Finding) -> Located {
        Located::at_path("a.yaml", f)
    }

    #[test]
    fn most_frequent_first_then_by_code_with_fix_marks() {
        let reports = vec![
            at(Finding::warning(Rule::KeptUserValue, 0, "x")),
            at(Finding::error(Rule::WouldChange, 0, "x").fixed()),
            at(Finding::error(Rule::UnknownEntrypoint, 0, "x")),
            at(Finding::error(Rule::WouldChange, 0, "x").fixed()),
            at(Finding::info(Rule::StrategyChosen, 0, "x")),
            at(Finding::info(Rule::StrategyChosen, 0, "x")),
            at(Finding::info(Rule::StrategyChosen, 0, "x")),
        ];
        assert_eq!(
            text(&reports),
            "3\tMJ120\t[ ] strategy chosen\n\
             2\tMJ701\t[*] pod would change\n\
             1\tMJ204\t[ ] entrypoint unknown\n\
             1\tMJ520\t[ ] your value kept\n"
        );
        let plain = vec![at(Finding::warning(Rule::KeptUserValue, 0, "x"))];
        assert_eq!(text(&plain), "1\tMJ520\tyour value kept\n");
        assert_eq!(text(&[]), "");
    }
}
