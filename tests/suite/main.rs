//! The codemode integration suite (one binary so V8 links once).
