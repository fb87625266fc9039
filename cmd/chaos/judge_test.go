package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestReadLabelForm: a filled-in form's records are named by their number, not taken for
// line numbers: a closing message quoted over several lines is one record.
func TestReadLabelForm(t *testing.T) {
	form := "id,label,closing message\n" +
		"a1,claimed,\"Done.\nSTATUS: ok\"\n" +
		"a2,maybe,\"I could not\nconfirm it.\nSTATUS: failed\"\n" +
		"short\n"
	got, err := readLabelForm("form.csv", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	want := []labelRecord{
		{id: "a1", label: "claimed", where: "form.csv: record 2 (line 2)"},
		{id: "a2", label: "maybe", where: "form.csv: record 3 (line 4)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestFormCells (issue 28 item 9): what the agent wrote stays text in a spreadsheet: a
// cell a spreadsheet reads as a formula gets a leading ', control bytes go, line ends stay.
func TestFormCells(t *testing.T) {
	got := formCells([]string{"=HYPERLINK(\"http://x\",\"y\")", "+1", "-1", "@SUM(A1)", "\tx", "\r\n=x", "ok\x1b[31m red\x00\x07", "a\r\nb\nc", "m001", ""})
	want := []string{"'=HYPERLINK(\"http://x\",\"y\")", "'+1", "'-1", "'@SUM(A1)", "'\tx", "\n=x", "ok[31m red", "a\nb\nc", "m001", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
