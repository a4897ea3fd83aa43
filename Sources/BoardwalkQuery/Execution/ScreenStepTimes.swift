/// The sessions of a screen funnel without `by` that reached each step, and their times there, appended in place: a
/// growable buffer per step, without the capacity and uniqueness checks of an array nested in an array (an
/// `isUniquelyReferenced` call per session and step: callgrind, a fifth of a median onboarding's funnel after the scan).
///
/// A reference type: the sink holds the one instance and appends to it through the reference.
final class ScreenStepTimes {
    private struct Step {
        var times: UnsafeMutablePointer<Double>
        var count: Int
        var capacity: Int
    }

    @exclusivity(unchecked) private var steps: [Step] = []
    /// Each step's first buffer holds this many times: the sessions expected, so that a buffer does not grow (each
    /// growth copied it into fresh memory: a page fault per 4 KiB in a new process).
    private let initialCapacity: Int

    /// - Parameter expectedSessions: the sessions expected (0: unknown); buffers grow past it.
    init(expectedSessions: Int = 0) {
        // Memory is only touched as it fills: a large reservation costs address space, not pages.
        initialCapacity = min(max(expectedSessions, 64), 1 << 24)
    }

    deinit {
        for step in steps { step.times.deallocate() }
    }

    /// Adds a session that started at `started` (µs) and reached steps `0...furthest` at `reachTimes` (µs).
    func add(started: Int64, reachTimes: [Int64], furthest: Int) {
        while steps.count <= furthest {
            steps.append(Step(times: .allocate(capacity: initialCapacity), count: 0, capacity: initialCapacity))
        }
        steps.withUnsafeMutableBufferPointer { steps in
            reachTimes.withUnsafeBufferPointer { reach in
                for i in 0...furthest {
                    if steps[i].count == steps[i].capacity {
                        let bigger = UnsafeMutablePointer<Double>.allocate(capacity: steps[i].capacity * 2)
                        bigger.moveInitialize(from: steps[i].times, count: steps[i].count)
                        steps[i].times.deallocate()
                        steps[i].times = bigger
                        steps[i].capacity *= 2
                    }
                    (steps[i].times + steps[i].count).initialize(to: elapsed(from: started, to: reach[i]))
                    steps[i].count += 1
                }
            }
        }
    }

    /// Per step (up to the furthest one any session reached): the sessions that reached it.
    var reached: [Int] { steps.map(\.count) }

    /// Per step: the times the sessions reached it, in the order they were added; the buffers are freed, and the
    /// instance holds no step afterwards.
    ///
    /// Each step's buffer is freed as soon as it is copied, so the allocator can hand its memory to the next step's
    /// copy (the steps' counts never grow from one step to the next): a copy of every buffer into fresh memory was a
    /// page fault per 4 KiB in a new process (a median onboarding's funnel: 266 of them).
    func takeTimes() -> [[Double]] {
        var times: [[Double]] = []
        times.reserveCapacity(steps.count)
        for step in steps {
            times.append(Array(UnsafeBufferPointer(start: step.times, count: step.count)))
            step.times.deallocate()
        }
        steps = []
        return times
    }
}
