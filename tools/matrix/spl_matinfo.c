/* spl-matinfo: reads one matrix file (Matrix Market or Harwell-Boeing) with splmatrix and prints
 * its shape and row-length statistics, one "key: value" line each, so scripts and ctest can grep
 * them. On a malformed file it prints the reader's located message ("FILE:LINE: ...") to stderr
 * and exits with status 1; a wrong command line exits with status 2. */
#include "spl_matrix.h"

#include <stdio.h>
#include <string.h>

static void print_summary(const char *path, const spl_csr *m) {
  int64_t shortest = 0, longest = 0, empty = 0;
  for (int64_t i = 0; i < m->rows; ++i) {
    int64_t length = m->offs[i + 1] - m->offs[i];
    if (i == 0 || length < shortest)
      shortest = length;
    if (length > longest)
      longest = length;
    empty += length == 0;
  }
  double average = m->rows > 0 ? (double)m->nnz / (double)m->rows : 0.0;
  printf("file: %s\n", path);
  printf("rows: %lld\n", (long long)m->rows);
  printf("cols: %lld\n", (long long)m->cols);
  printf("nnz: %lld\n", (long long)m->nnz);
  printf("row_length_min: %lld\n", (long long)shortest);
  printf("row_length_max: %lld\n", (long long)longest);
  printf("row_length_avg: %.3f\n", average);
  printf("empty_rows: %lld\n", (long long)empty);
}

static const char kUsage[] = "usage: spl-matinfo FILE\n"
                             "  prints rows, cols, nnz and row-length statistics of a Matrix Market or\n"
                             "  Harwell-Boeing file\n";

int main(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("spl-matinfo (SPL) %s\n", SPL_TOOLS_VERSION);
    return 0;
  }
  if (argc != 2) {
    fputs(kUsage, stderr);
    return 2;
  }
  char message[512];
  spl_csr matrix;
  if (spl_read_matrix(argv[1], &matrix, message, sizeof message) != SPL_MATRIX_OK) {
    fprintf(stderr, "%s\n", message);
    return 1;
  }
  print_summary(argv[1], &matrix);
  spl_csr_free(&matrix);
  return 0;
}
