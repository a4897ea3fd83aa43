import BoardwalkModel

@testable import BoardwalkJSON

/// The JSON reader's fast path against simdjson On-Demand: for every line, a reader with the fast path and one
/// without must give the same event or the same error, whatever follows the line in memory.
///
/// Input: byte 0 picks the limits (bit 0) and how the 64 padding bytes after each line are filled (bits 1-2),
/// byte 1 is the fill byte, and the rest is NDJSON, read three ways by both readers:
/// 1. each line in place, in an allocation of exactly its length plus the 64 bytes of padding the reader asks
///    for (so AddressSanitizer reports any read past them), padded as byte 0 says: the fill byte throughout;
///    the fill byte then `x`s (after a quote, a string that never closes); or the input's next bytes, as in a
///    real buffer; and then padded with a quote and `x`s whatever byte 0 says, the worst case for a scanner;
/// 2. each line through the reader's scratch copy (`read(line:)` with nothing readable after it), after the
///    input's earlier, possibly longer, lines have left their bytes in the scratch buffer and in the
///    structural index;
/// 3. the whole text through `readLines`, in place in libFuzzer's exactly sized copy of the input.
///
/// The readers live across inputs (making four per input cost more than the checks), so each input starts by
/// putting back the state that earlier lines leave: a reset line whose structural index entries (but the first)
/// point 8 000 bytes or more into it, so stale entries past a short line point far outside it, and then the scratch
/// buffer filled with the fill byte. What later lines find there comes from the input alone.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let flags = data[0], fill = data[1]
    let text = UnsafeRawBufferPointer(start: data + 2, count: size - 2)
    let (fast, slow) = readers[Int(flags & 1)]
    for reader in [fast, slow] {
        resetLine.withUnsafeBytes { _ = try? reader.read(line: $0, arrival: arrival) }
        reader.scratch.initializeMemory(as: UInt8.self, repeating: fill)
    }

    var lines: [Range<Int>] = []
    var start = 0
    for i in 0..<text.count where text[i] == 0x0A {
        lines.append(start..<i)
        start = i + 1
    }
    if start < text.count { lines.append(start..<text.count) }

    let padding = 64  // what `read(line:readableAfter:)` needs after a line to parse it in place (BW_PADDING)
    for (i, range) in lines.enumerated() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: range.count + padding, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: text[range]))
        let line = UnsafeRawBufferPointer(rebasing: buffer[0..<range.count])
        for worst in [false, true] {
            for p in 0..<padding {
                let next = range.upperBound + p
                switch worst ? 1 : flags >> 1 & 3 {
                case 1: buffer[range.count + p] = p == 0 ? (worst ? UInt8(ascii: "\"") : fill) : UInt8(ascii: "x")
                case 2: buffer[range.count + p] = next < text.count ? text[next] : fill
                default: buffer[range.count + p] = fill
                }
            }
            compare(
                Result { () throws(JSONReadError) -> Event in
                    try fast.read(line: line, readableAfter: padding, lineNumber: i + 1, arrival: arrival)
                },
                Result { () throws(JSONReadError) -> Event in
                    try slow.read(line: line, readableAfter: padding, lineNumber: i + 1, arrival: arrival)
                },
                "in place", line)
        }
    }

    for (i, range) in lines.enumerated() {
        let line = UnsafeRawBufferPointer(rebasing: text[range])
        compare(
            Result { () throws(JSONReadError) -> Event in try fast.read(line: line, lineNumber: i + 1, arrival: arrival)
            },
            Result { () throws(JSONReadError) -> Event in try slow.read(line: line, lineNumber: i + 1, arrival: arrival)
            },
            "copied", line)
    }

    var fastResults: [(Int, Result<Event, JSONReadError>)] = []
    fast.readLines(in: text, arrival: arrival) { fastResults.append(($0, $1)) }
    var index = 0
    slow.readLines(in: text, arrival: arrival) { number, result in
        guard index < fastResults.count, index < lines.count, fastResults[index].0 == number else {
            jsonFuzzFailure("readLines: the two readers report different lines at line \(number)")
        }
        compare(fastResults[index].1, result, "readLines", UnsafeRawBufferPointer(rebasing: text[lines[index]]))
        index += 1
    }
    if index != fastResults.count { jsonFuzzFailure("readLines: the two readers read different numbers of lines") }
    return 0
}

let arrival = Timestamp(microseconds: 1_800_000_000_000_000)

/// A fast and a slow reader for roomy limits, and for limits small enough that the fast path meets every one
/// of them (string length, depth, multi-select elements).
let readers: [(fast: EventReader, slow: EventReader)] = [
    JSONReaderLimits(maxLineBytes: 1 << 15),
    JSONReaderLimits(maxLineBytes: 1 << 15, maxStringBytes: 6, maxDepth: 4, maxChoices: 2),
].map { limits in
    guard let fast = try? EventReader(limits: limits), let slow = try? EventReader(limits: limits) else {
        jsonFuzzFailure("cannot make a reader")
    }
    slow.fastPath = false
    return (fast, slow)
}

/// Longer than any input line (libFuzzer runs with -max_len=16384), so the scratch buffer has its final size
/// after it. It starts with `[` because the reader looks for a blank line byte by byte.
let resetLine =
    [UInt8(ascii: "[")] + [UInt8](repeating: 0x20, count: 8000)
    + [UInt8](repeating: UInt8(ascii: ","), count: 8448)

func compare(
    _ fast: Result<Event, JSONReadError>, _ slow: Result<Event, JSONReadError>, _ how: String,
    _ line: UnsafeRawBufferPointer
) {
    if fast != slow {
        jsonFuzzFailure("\(how): the fast path gives \(fast), On-Demand gives \(slow), for the line \(Array(line))")
    }
}

/// Stops the process so libFuzzer records the input as a crash, saying which check failed.
func jsonFuzzFailure(_ message: String) -> Never {
    fatalError("fuzz oracle failed: \(message)")
}
