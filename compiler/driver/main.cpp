/// \file main.cpp: the splc executable. Parses the command line, then runs the compiler on a
/// thread with a large stack so that deeply nested (even adversarial) programs are handled by
/// the diagnostics of the stages, never by a stack overflow.
#include <pthread.h>

#include <iostream>
#include <string>
#include <vector>

#include "driver/Driver.h"
#include "driver/Options.h"

namespace {

struct Job {
  const spl::Options *opts;
  int status;
};

void *runJob(void *arg) {
  Job *job = static_cast<Job *>(arg);
  job->status = spl::runCompiler(*job->opts, std::cerr);
  return nullptr;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  spl::ParsedArgs parsed = spl::parseArgs(args);
  if (parsed.exitNow) {
    std::cout << parsed.message;
    return 0;
  }
  if (!parsed.options) {
    std::cerr << "splc: error: " << parsed.error << "\n";
    return 1;
  }
  Job job{&*parsed.options, 1};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Stack pages are only committed when touched, so a large reservation is cheap.
  pthread_attr_setstacksize(&attr, size_t(1) << 30);
  pthread_t thread;
  if (pthread_create(&thread, &attr, runJob, &job) != 0) {
    runJob(&job);  // fall back to the main thread
  } else {
    pthread_join(thread, nullptr);
  }
  pthread_attr_destroy(&attr);
  return job.status;
}
