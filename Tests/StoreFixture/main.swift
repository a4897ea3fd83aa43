// A child process for the store's fault tests (Tests/BoardwalkStoreTests/FaultTests.swift).
//
//   boardwalk-store-fixture append <dir> <ack-file> <batch-size> [map-bytes]
//       Appends batch after batch forever. Batch b holds events with ids "b<b>-<j>" and stores checkpoint
//       "batch" = b in the same transaction; after each commit returns, "b\n" is appended to <ack-file>.
//   boardwalk-store-fixture read <dir> <target-events> <timeout-seconds>
//       Reads until it sees <target-events> events (or the timeout), printing each count seen; exits 1
//       if a count ever goes down or a snapshot disagrees with itself.
import BoardwalkModel
import BoardwalkStore

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    let bytes = Array("fixture: \(message)\n".utf8)
    _ = write(2, bytes, bytes.count)
    exit(2)
}

func batchEvents(_ b: UInt64, size: Int) -> [Event] {
    (0..<size).map { j in
        Event(
            time: Timestamp(microseconds: Int64(b) * 1_000_000 + Int64(j)), session: "s\(b % 37)",
            eventID: "b\(b)-\(j)",
            meta: Meta(
                onboardingID: "onb-\(b % 5)", screenClientID: "screen-\(j % 10)", screenIndex: j % 10, totalScreens: 10),
            payload: j % 3 == 0 ? .analytics(.screenPresented) : .custom(actionID: "a\(j % 7)"))
    }
}

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

let args = CommandLine.arguments
guard args.count >= 3 else { fail("usage: append|read <dir> …") }
switch args[1] {
case "append":
    guard args.count >= 5, let size = Int(args[4]) else {
        fail("usage: append <dir> <ack-file> <batch-size> [map-bytes]")
    }
    let mapBytes = args.count > 5 ? Int(args[5]) ?? (64 << 20) : 64 << 20
    do {
        let store = try Store.open(at: args[2], options: .init(initialMapSize: mapBytes))
        let last = try store.read { try $0.checkpoint("batch") }
        var b: UInt64 = last.map { $0.reduce(0) { $0 << 8 | UInt64($1) } + 1 } ?? 0
        let ack = open(args[3], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard ack >= 0 else { fail("cannot open \(args[3])") }
        while true {
            let value = (0..<8).map { UInt8(truncatingIfNeeded: b >> (56 - 8 * UInt64($0))) }
            try store.append(batchEvents(b, size: size), checkpoint: Checkpoint(key: "batch", value: value))
            let line = Array("\(b)\n".utf8)
            guard write(ack, line, line.count) == line.count else { fail("ack write failed") }
            b += 1
        }
    } catch {
        fail("\(error)")
    }
case "read":
    guard args.count >= 5, let target = Int(args[3]), let timeout = Double(args[4]) else {
        fail("usage: read <dir> <target-events> <timeout-seconds>")
    }
    do {
        let store = try Store.open(at: args[2], options: .init(initialMapSize: 1 << 16, readOnly: true))
        let deadline = now() + timeout
        var last = -1
        while now() < deadline {
            let (counted, stated) = try store.read { s -> (Int, Int) in
                var n = 0
                try s.forEachEvent(onboarding: nil) { _ in
                    n += 1; return true
                }
                return (n, try s.stats().events)
            }
            if counted != stated { fail("a snapshot scanned \(counted) events but its counters say \(stated)") }
            if counted < last { fail("the count went down from \(last) to \(counted)") }
            if counted != last { print(counted) }
            last = counted
            if counted >= target { exit(0) }
        }
        fail("timed out at \(last) events")
    } catch {
        fail("\(error)")
    }
default:
    fail("unknown mode \(args[1])")
}
