import Boardwalk

/// Passes text on without its line breaks and the indentation after them: a JSON result rendered over several lines
/// becomes one line (`query -` with `--format json` prints one document per query). Only for JSON, where a line
/// break can only fall between values (inside a string it is escaped).
final class JSONLinesSink: OutputSink {
    private let base: any OutputSink
    private var afterLineBreak = false

    init(_ base: any OutputSink) { self.base = base }

    func write(_ text: String) { write(bytes: Array(text.utf8)) }

    func write(bytes: [UInt8]) {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte == 0x0A {
                afterLineBreak = true
            } else if afterLineBreak && byte == 0x20 {
                continue
            } else {
                afterLineBreak = false
                out.append(byte)
            }
        }
        base.write(bytes: out)
    }

    func flush() { base.flush() }
    var writeError: Int32? { base.writeError }
}
