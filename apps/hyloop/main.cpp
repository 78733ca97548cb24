// hyloop: run, validate, identify, analyse, tune and report hybrid-simulation experiments. Each
// subcommand lives in its own file (an options struct, add_<name>_subcommand, run_<name>); main
// declares them in the order `hyloop --help` lists them and maps exceptions to exit codes: 2 for
// an invalid scenario, 1 for any other failure.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "analyze.hpp"
#include "certs.hpp"
#include "compare.hpp"
#include "ctl.hpp"
#include "export.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "identify.hpp"
#include "montecarlo.hpp"
#include "report.hpp"
#include "run.hpp"
#include "schema.hpp"
#include "site.hpp"
#include "summary.hpp"
#include "tune.hpp"
#include "up.hpp"
#include "validate.hpp"

int main(int argc, char** argv) {
  // Before the options: the kinds' help texts come from the loaded kinds.
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop")) return 2;
  CLI::App cli{"hyloop: real-time hybrid simulation and hardware-in-the-loop testing"};
  cli.add_option("--kinds",
                 "directory of kind plug-ins (repeatable; searched after "
                 "<prefix>/lib/hyloop/kinds and HYLOOP_KIND_PATH; docs/kinds.md)");
  cli.require_subcommand(1);
  cli.set_version_flag("--version", std::string("hyloop ") + hyloop::kHyloopVersion);

  hyloop::app::RunOptions run_options;
  CLI::App* run = hyloop::app::add_run_subcommand(cli, run_options);
  hyloop::app::CtlOptions ctl_options;
  CLI::App* ctl = hyloop::app::add_ctl_subcommand(cli, ctl_options);
  hyloop::app::CertsCliOptions certs_options;
  CLI::App* certs = hyloop::app::add_certs_subcommand(cli, certs_options);
  hyloop::app::SchemaOptions schema_options;
  CLI::App* schema = hyloop::app::add_schema_subcommand(cli, schema_options);
  hyloop::app::MonteCarloOptions montecarlo_options;
  CLI::App* montecarlo = hyloop::app::add_montecarlo_subcommand(cli, montecarlo_options);
  hyloop::app::UpOptions up_options;
  CLI::App* up = hyloop::app::add_up_subcommand(cli, up_options);
  hyloop::app::ValidateOptions validate_options;
  CLI::App* validate = hyloop::app::add_validate_subcommand(cli, validate_options);
  hyloop::app::IdentifyOptions identify_options;
  CLI::App* identify = hyloop::app::add_identify_subcommand(cli, identify_options);
  hyloop::app::AnalyzeCliOptions analyze_options;
  CLI::App* analyze = hyloop::app::add_analyze_subcommand(cli, analyze_options);
  hyloop::app::TuneCliOptions tune_options;
  CLI::App* tune = hyloop::app::add_tune_subcommand(cli, tune_options);
  hyloop::app::SummaryOptions summary_options;
  CLI::App* summary = hyloop::app::add_summary_subcommand(cli, summary_options);
  hyloop::app::ReportOptions report_options;
  CLI::App* report = hyloop::app::add_report_subcommand(cli, report_options);
  hyloop::app::ExportOptions export_options;
  CLI::App* export_cmd = hyloop::app::add_export_subcommand(cli, export_options);
  hyloop::app::CompareOptions compare_options;
  CLI::App* compare = hyloop::app::add_compare_subcommand(cli, compare_options);
  hyloop::app::SiteOptions site_options;
  CLI::App* site = hyloop::app::add_site_subcommand(cli, site_options);

  CLI11_PARSE(cli, argc, argv);

  // These say what went wrong themselves.
  if (*ctl) return hyloop::app::run_ctl(ctl_options);
  if (*certs) return hyloop::app::run_certs(certs_options);
  if (*schema) return hyloop::app::run_schema(schema_options);
  if (*montecarlo) return hyloop::app::run_montecarlo(montecarlo_options);
  if (*site) return hyloop::app::run_site(site_options);
  try {
    if (*up) return hyloop::app::run_up(up_options);
    if (*run) return hyloop::app::run_in_process(run_options);
    if (*summary) return hyloop::app::run_summary(summary_options);
    if (*validate) return hyloop::app::run_validate(validate_options);
    if (*identify) return hyloop::app::run_identify(identify_options);
    if (*analyze) return hyloop::app::run_analyze(analyze_options);
    if (*tune) return hyloop::app::run_tune(tune_options);
    if (*report) return hyloop::app::run_report(report_options, argv[0]);
    if (*export_cmd) return hyloop::app::run_export(export_options);
    if (*compare) return hyloop::app::run_compare(compare_options, argv[0]);
  } catch (const hyloop::experiment::ScenarioError& e) {
    std::cerr << "hyloop: invalid scenario: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hyloop: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
