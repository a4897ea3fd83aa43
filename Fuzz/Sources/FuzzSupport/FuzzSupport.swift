import BoardwalkCodec
import BoardwalkModel

/// A fixed dictionary for the record fuzzer: 300 distinct strings (so references need one or two varint
/// bytes), none of them a UUID (a UUID event id would be re-encoded inline rather than as a reference).
public let fuzzStrings: [String] = (0..<300).map { i in i % 7 == 0 ? "é\(i)日本" : "s\(i)" }

/// Stops the process so libFuzzer records the input as a crash, with a message saying which oracle failed.
public func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz oracle failed: \(message)")
}

/// The full record of `event` encoded with a copy of `table` (so ids are assigned as in `table`).
public func reencodeRecord(_ event: Event, table: StringTable) -> [UInt8] {
    var strings = table
    var encoder = RecordEncoder()
    do {
        try encoder.appendRecord(event, strings: &strings)
    } catch {
        fuzzFailure("a decoded event failed to encode: \(error)")
    }
    return Array(encoder.bytes)
}
