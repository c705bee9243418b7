# Sourced by .ci scripts: junit_case FILE SUITE NAME FAILED(0|1) DETAILS_FILE writes a one-case JUnit report
# that .ci/junit-summary.ts sums with the test runs into the closing "N passed, N failed" line.
xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }

junit_case() {
  local file=$1 suite=$2 name=$3 failed=$4 details=$5
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites name=\"$suite\" tests=\"1\" failures=\"$failed\" errors=\"0\" skipped=\"0\">"
    echo "  <testsuite name=\"$suite\" tests=\"1\" failures=\"$failed\" errors=\"0\" skipped=\"0\">"
    echo "    <testcase name=\"$name\" classname=\"$suite\">"
    if [ "$failed" != 0 ]; then
      echo "      <failure message=\"$name failed\">$(tail -c 4000 "$details" | xml_escape)</failure>"
    fi
    echo '    </testcase>'
    echo '  </testsuite>'
    echo '</testsuites>'
  } >"$file"
}
