//! How a front end names what its user typed, so that the library's messages speak the
//! front end's language: `--max-length` on the command line, `max_length` in Python.

/// The words a front end's messages use for its arguments.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// Put before every line the library prints on stderr ("cubeswarm: " where the
    /// caller's own output is interleaved, as in a notebook).
    pub prefix: &'static str,
    /// The method argument.
    pub method: &'static str,
    /// The optimal method, as the user asks for it.
    pub optimal: &'static str,
    /// The two-phase method, as the user asks for it.
    pub twophase: &'static str,
    /// The longest solution length.
    pub max_length: &'static str,
    /// The shortest solution length.
    pub min_length: &'static str,
    /// The number of solutions.
    pub solutions: &'static str,
    /// Every optimal solution.
    pub all: &'static str,
    /// The per-position time limit.
    pub time_limit: &'static str,
    /// The anytime two-phase search.
    pub anytime: &'static str,
    /// The number of threads.
    pub threads: &'static str,
    /// Searching every prefix of a symmetric position.
    pub no_symmetry: &'static str,
    /// How to list the known tables.
    pub list_tables: &'static str,
}

impl Dialect {
    /// The command line's words.
    pub const CLI: Dialect = Dialect {
        prefix: "",
        method: "--method",
        optimal: "--method optimal",
        twophase: "--method twophase",
        max_length: "--max-length",
        min_length: "--min-length",
        solutions: "--solutions",
        all: "--all",
        time_limit: "--time-limit",
        anytime: "--anytime",
        threads: "--threads",
        no_symmetry: "--no-symmetry",
        list_tables: "`cubeswarm tables list`",
    };

    /// The Python package's words.
    pub const PYTHON: Dialect = Dialect {
        prefix: "cubeswarm: ",
        method: "method",
        optimal: "method=\"optimal\"",
        twophase: "method=\"twophase\"",
        max_length: "max_length",
        min_length: "min_length",
        solutions: "solutions",
        all: "solutions=None",
        time_limit: "time_limit",
        anytime: "anytime=True",
        threads: "threads",
        no_symmetry: "symmetry=False",
        list_tables: "cubeswarm.tables.list()",
    };

    /// Prints `line` on stderr with the prefix.
    pub fn say(&self, line: &str) {
        eprintln!("{}{line}", self.prefix);
    }
}
