//! kas-test-apiserver: a small aggregated API server for the tests of the aggregation
//! layer (see `kas_e2e::test_apiserver`).

use clap::Parser;

#[tokio::main]
async fn main() {
    let options = kas_e2e::test_apiserver::Options::parse();
    if let Err(e) = kas_e2e::test_apiserver::run(options).await {
        eprintln!("kas-test-apiserver: {e:#}");
        std::process::exit(1);
    }
}
