//! The search engines.
