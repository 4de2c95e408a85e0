// OpenCoreData benchmarks. Results and how to read them: BENCHMARKS.md.
print("OpenCoreData benchmarks (release build, median of 5 runs after a warm-up)")
PredicateBenchmarks.run()
ObjectGraphBenchmarks.run()
