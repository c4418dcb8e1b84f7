//! `cubeswarm`: command-line entry point. Parses flags and dispatches; the work lives in the
//! library crates (`tables`, `proto`, `worker`, `coordinator`; a solve goes through the
//! front-end library `frontend`, as the Python package's does) and the command modules
//! here.
//!
//! # Layout
//! - `solve_cmd`: `solve`, one position or a file of them through the embedded default,
//!   or through a cluster with `--coordinator`.
//! - `remote_solve`: `solve --coordinator`, the cluster client library with a progress bar.
//! - `solve_to`: `solve --to`, a position solved to a target pattern.
//! - `trace_cmd`: `solve --trace`, one optimal search recorded for `bench split`.
//! - `scramble_cmd`: `scramble`, random-state scrambles reproducible by seed.
//! - `show`: `show`, a position drawn as a cube net with its facelet string.
//! - `tables_cmd`: `tables list | build | verify | fetch`.
//! - `bench_cmd`: `bench`: the core operations, both solvers, the coordinator at scale,
//!   and a probe of the machine.
//! - `split_cmd`: `bench split`, a recorded search replayed under other splittings.
//! - `hollow_cmd`: `bench hollow-worker`, the real worker session answering from a trace.
//! - `refine_cmd`: `bench refine-trace`, a trace given the 6- and 7-move counts of its
//!   heavy 5-move prefixes, searched anew.
//! - `coordinator_cmd`: `coordinator`, the cluster's scheduler behind gRPC.
//! - `worker_cmd`: `worker`, this machine's engines serving a coordinator.
//! - `status_cmd`: `status`, a cluster at a glance, once or refreshed.
//! - `progress`: what the user sees on stderr: `Bars` for long table work, the bar of a
//!   scramble set and its closing line (drawn on a terminal only).
//!
//! Exit status: 0 success (for `solve`: every line solved); 1 the command failed (bad
//! flags or input found before solving, a table, the output, the cluster refused or was
//! unreachable past `--connect-timeout`, ...); 2 the command line cannot be parsed
//! (clap); 3 `solve` ran to its end but some lines have no solution (error records).

mod bench_cmd;
mod coordinator_cmd;
mod hollow_cmd;

mod progress;
mod refine_cmd;
mod remote_solve;
mod scramble_cmd;
mod show;
mod solve_cmd;
mod solve_to;
mod split_cmd;
mod status_cmd;
mod tables_cmd;
mod trace_cmd;
mod worker_cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The command failed.
const EXIT_FAILED: i32 = 1;
/// `solve` ran to its end, but some lines have no solution.
const EXIT_LINES_FAILED: i32 = 3;

/// Rubik's Cube solving: optimal (H48) and near-optimal (two-phase), one position or millions.
#[derive(Parser)]
#[command(
    name = "cubeswarm",
    version,
    about,
    after_help = "Exit status: 0 success (solve: every line solved); 1 the command failed; \
                  2 a usage error; 3 solve ran to its end but some lines have no solution \
                  (their records are errors)."
)]
struct Cli {
    /// Directory holding the pruning-table files [default: $CUBESWARM_TABLES, else
    /// ~/.local/share/cubeswarm/tables].
    #[arg(long, global = true, env = "CUBESWARM_TABLES")]
    tables_dir: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Command,
}

/// Flags every cluster process shares (coordinator, worker, client).
#[derive(clap::Args, Clone, Debug)]
pub struct Common {
    /// File holding the cluster's bearer token [default: $CUBESWARM_TOKEN; none: no
    /// authentication].
    #[arg(long, global = true)]
    pub token_file: Option<PathBuf>,
    /// PEM file of the CA that signed the coordinator's certificate (for https:// URLs).
    #[arg(long, global = true)]
    pub tls_ca: Option<PathBuf>,
    /// Logs as JSON lines (one object per event) instead of text.
    #[arg(long, global = true)]
    pub log_json: bool,
}

impl Common {
    /// The connection settings for a coordinator at `url`.
    pub fn client_config(&self, url: &str) -> anyhow::Result<proto::transport::ClientConfig> {
        let mut c = proto::transport::ClientConfig::new(url);
        c.token = proto::transport::read_token(self.token_file.as_deref())?;
        c.tls_ca = self.tls_ca.clone();
        Ok(c)
    }
}

/// Structured logs on stderr (`RUST_LOG` filters; default `info`).
fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[derive(Subcommand)]
enum Command {
    /// Solve a position (scramble or facelet string), or a file of them.
    Solve(solve_cmd::SolveArgs),
    /// Random-state scrambles (uniformly random states, as the WCA makes them), by seed.
    Scramble(scramble_cmd::ScrambleArgs),
    /// Print a position as a cube net, its symmetries and its facelet string.
    Show {
        /// A scramble in cubing.js notation ("R U R' U'", "M2 U M2 U2 M2 U M2", "[r, U]") or a
        /// 54-character facelet string.
        position: String,
        /// Plain letters even on a terminal.
        #[arg(long)]
        no_color: bool,
    },
    /// List, build or verify pruning tables.
    Tables {
        #[command(subcommand)]
        action: tables_cmd::TablesAction,
    },
    /// Run the cluster's coordinator: workers join it, clients send it scrambles.
    Coordinator(coordinator_cmd::CoordinatorArgs),
    /// Benchmarks: core operations, the optimal solver, the two-phase solver, the
    /// coordinator at scale (simulated).
    Bench {
        #[command(subcommand)]
        which: bench_cmd::BenchWhich,
    },
    /// Serve a coordinator: run its jobs on this machine's tables until SIGTERM.
    Worker(worker_cmd::WorkerArgs),
    /// Show a cluster's coordinator at a glance: workers, open requests, totals.
    Status(status_cmd::StatusArgs),
}

fn main() {
    let cli = Cli::parse();
    init_logs(cli.common.log_json);
    let dir = cli
        .tables_dir
        .clone()
        .unwrap_or_else(tables::tablefile::default_tables_dir);
    let result = match cli.command {
        Command::Solve(args) => match solve_cmd::run(&dir, &cli.common, args) {
            Ok(solve_cmd::Finished::Solved) => Ok(()),
            Ok(solve_cmd::Finished::Failed { message, .. }) => {
                if let Some(m) = message {
                    eprintln!("cubeswarm: error: {m}");
                }
                std::process::exit(EXIT_LINES_FAILED);
            }
            Err(e) => Err(e),
        },
        Command::Scramble(args) => scramble_cmd::run(&dir, args),
        Command::Show { position, no_color } => show_position(&position, no_color),
        Command::Tables { action } => tables_cmd::run(&dir, &cli.common, action),
        Command::Bench {
            which: bench_cmd::BenchWhich::HollowWorker(args),
        } => hollow_cmd::run(&cli.common, args),
        Command::Bench { which } => bench_cmd::run(&dir, which),
        Command::Coordinator(args) => coordinator_cmd::run(&dir, &cli.common, args),
        Command::Worker(args) => worker_cmd::run(&dir, &cli.common, args),
        Command::Status(args) => status_cmd::run(&cli.common, args),
    };
    if let Err(e) = result {
        eprintln!("cubeswarm: error: {}", frontend::chain(e.as_ref()));
        std::process::exit(EXIT_FAILED);
    }
}

fn show_position(position: &str, no_color: bool) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let position = tables::Position::parse(position)?;
    let cube = position.cube();
    let color = !no_color && std::io::stdout().is_terminal();
    print!("{}", show::render_net(cube, color));
    let own = tables::symmetries().of_cube(cube);
    println!(
        "symmetries: {} of the 48 fix it, {} map it to its inverse",
        own.fixing.len(),
        own.inverting.len()
    );
    println!("{}", tables::facelet::to_facelets(cube));
    Ok(())
}
