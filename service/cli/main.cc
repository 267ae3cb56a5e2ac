// capplan: the planner's command line (offline, or --server host:port).
#include <iostream>
#include <string>
#include <vector>

#include "service/cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return capplan::service::RunCli(args, std::cout, std::cerr);
}
