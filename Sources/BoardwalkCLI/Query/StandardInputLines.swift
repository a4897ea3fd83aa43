import Boardwalk

/// The lines of standard input, read as they arrive (without their newlines, `\n` or `\r\n`), a UTF-8 byte-order mark
/// at the very start left out: Windows editors save `queries.txt` with one, and it is no part of the first query.
struct StandardInputLines: Sequence, IteratorProtocol {
    private var atStart = true

    mutating func next() -> String? {
        guard var line = Swift.readLine(strippingNewline: true) else { return nil }
        if atStart {
            atStart = false
            if line.unicodeScalars.first == "\u{FEFF}" { line.unicodeScalars.removeFirst() }
        }
        return line
    }
}
