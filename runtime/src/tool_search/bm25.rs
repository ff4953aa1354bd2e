//! A small Okapi BM25 index (k1 = 1.2, b = 0.75) with an English-ish tokenizer.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common in tool descriptions to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with",
];

/// Lowercase terms of `text`: split on anything not alphanumeric (so `_`, `-`, `.` and spaces
/// separate words) and at camelCase boundaries, stopwords dropped, plurals folded.
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut terms);
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            flush(&mut current, &mut terms);
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut terms);
    terms
}

fn flush(current: &mut String, terms: &mut Vec<String>) {
    if current.is_empty() {
        return;
    }
    let word = std::mem::take(current);
    if !STOPWORDS.contains(&word.as_str()) {
        terms.push(stem(word));
    }
}

/// Folds the common English plural endings: `entities` → `entity`, `files` → `file`.
fn stem(word: String) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..word.len() - 1].to_owned();
    }
    word
}

/// BM25 over a fixed list of documents, identified by their position.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bm25Index {
    /// Term frequencies per document.
    documents: Vec<HashMap<String, usize>>,
    lengths: Vec<usize>,
    /// Number of documents containing each term.
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

impl Bm25Index {
    pub(crate) fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut index = Self::default();
        for text in texts {
            let terms = tokenize(text);
            let mut frequencies: HashMap<String, usize> = HashMap::new();
            for term in &terms {
                *frequencies.entry(term.clone()).or_default() += 1;
            }
            for term in frequencies.keys() {
                *index.document_frequency.entry(term.clone()).or_default() += 1;
            }
            index.lengths.push(terms.len());
            index.documents.push(frequencies);
        }
        let total: usize = index.lengths.iter().sum();
        index.average_length = if index.documents.is_empty() {
            0.0
        } else {
            total as f64 / index.documents.len() as f64
        };
        index
    }

    pub(crate) fn len(&self) -> usize {
        self.documents.len()
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.documents.len() as f64;
        let df = self.document_frequency.get(term).copied().unwrap_or(0) as f64;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// Documents with a positive score, best first; ties keep document order.
    pub(crate) fn search(&self, query: &str) -> Vec<(usize, f64)> {
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let average = if self.average_length > 0.0 {
            self.average_length
        } else {
            1.0
        };
        let mut hits: Vec<(usize, f64)> = self
            .documents
            .iter()
            .zip(&self.lengths)
            .enumerate()
            .filter_map(|(position, (frequencies, length))| {
                let norm = K1 * (1.0 - B + B * *length as f64 / average);
                let score: f64 = terms
                    .iter()
                    .filter_map(|term| {
                        let tf = *frequencies.get(term)? as f64;
                        Some(self.idf(term) * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (score > 0.0).then_some((position, score))
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits
    }
}
