//! `stackbench-load URL [options]`: parse, run, print. Exit 0 run done (errors are data),
//! 2 bad command line, 1 could not run at all.

use clap::Parser;
use stackbench_load::cli::Args;
use stackbench_load::config::OutputFormat;
use stackbench_load::{report, run};
use std::process::ExitCode;

fn main() -> ExitCode {
    let config = match Args::parse().into_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("stackbench-load: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&config) {
        Ok(result) => {
            match config.output {
                OutputFormat::Json => println!("{}", report::json(&result)),
                OutputFormat::Human => print!("{}", report::human(&result)),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stackbench-load: {e}");
            ExitCode::from(1)
        }
    }
}
