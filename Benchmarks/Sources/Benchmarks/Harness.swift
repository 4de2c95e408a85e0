import CoreData

/// Runs `body` `repetitions` times after one warm-up and reports the median wall-clock time.
/// Medians resist the noise of a shared two-core machine better than means.
func measure(_ name: String, repetitions: Int = 5, _ body: () -> Int) -> Duration {
    var sink = body()
    var times: [Duration] = []
    let clock = ContinuousClock()
    for _ in 0..<repetitions {
        let start = clock.now
        sink &+= body()
        times.append(clock.now - start)
    }
    let median = times.sorted()[times.count / 2]
    print(
        "  \(name.padding(toLength: 58, withPad: " ", startingAt: 0)) median \(format(median))  (checksum \(sink % 1000))"
    )
    return median
}

/// Like ``measure(_:repetitions:_:)``, with `setup` run untimed before each run of `body` (a
/// delete needs rows to delete each time).
func measure(_ name: String, repetitions: Int = 5, setup: () -> Void, _ body: () -> Int) -> Duration {
    var sink = 0
    var times: [Duration] = []
    let clock = ContinuousClock()
    for run in 0...repetitions {
        setup()
        let start = clock.now
        sink &+= body()
        if run > 0 { times.append(clock.now - start) }
    }
    let median = times.sorted()[times.count / 2]
    print(
        "  \(name.padding(toLength: 58, withPad: " ", startingAt: 0)) median \(format(median))  (checksum \(sink % 1000))"
    )
    return median
}

func format(_ duration: Duration) -> String {
    let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    if seconds >= 1 { return String(format: "%8.3f s ", seconds) }
    if seconds >= 0.001 { return String(format: "%8.2f ms", seconds * 1000) }
    return String(format: "%8.2f µs", seconds * 1_000_000)
}

func ratio(_ a: Duration, _ b: Duration) -> String {
    let x = Double(a.components.seconds) + Double(a.components.attoseconds) / 1e18
    let y = Double(b.components.seconds) + Double(b.components.attoseconds) / 1e18
    return String(format: "%.2f×", x / y)
}
