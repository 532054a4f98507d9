//! The bytes an anchored regular expression's match can begin with ([`FirstBytes`]).

/// The bytes a match of a regular expression anchored at the start (`^...`) can begin with, so
/// that a text starting with none of them is not searched. Unknown (no `^`, a class too large, a
/// pattern that matches the empty text): every text may match.
#[derive(Debug, Clone, Default)]
pub struct FirstBytes(Option<Box<[bool; 256]>>);

impl FirstBytes {
    /// Of the pattern `re`, as written.
    pub fn of(re: Option<&str>) -> FirstBytes {
        use regex_syntax::hir::{Look, literal::Extractor};
        let Some(hir) = re.and_then(|re| regex_syntax::parse(re).ok()) else { return FirstBytes(None) };
        if !hir.properties().look_set_prefix().contains(Look::Start) {
            return FirstBytes(None);
        }
        let seq = Extractor::new().extract(&hir);
        let Some(lits) = seq.literals() else { return FirstBytes(None) };
        let mut table = Box::new([false; 256]);
        for l in lits {
            match l.as_bytes().first() {
                Some(b) => table[*b as usize] = true,
                None => return FirstBytes(None),
            }
        }
        FirstBytes(Some(table))
    }

    /// Of several patterns: a text may match one of them when it may match any.
    pub fn of_any<'a>(res: impl IntoIterator<Item = &'a str>) -> FirstBytes {
        let mut table = Box::new([false; 256]);
        for re in res {
            let FirstBytes(Some(t)) = FirstBytes::of(Some(re)) else { return FirstBytes(None) };
            for (all, one) in table.iter_mut().zip(t.iter()) {
                *all |= *one;
            }
        }
        FirstBytes(Some(table))
    }

    /// False only when the regular expression cannot match `text`.
    pub fn may_match(&self, text: &str) -> bool {
        match &self.0 {
            None => true,
            Some(t) => text.as_bytes().first().is_some_and(|b| t[*b as usize]),
        }
    }
}
