#include "suite/cli/app.h"

int main(int argc, char** argv) { return lrb::cli_main(argc, argv); }
