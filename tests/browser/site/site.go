// Package site is the browser wall's test site: a small form application on loopback
// with a JSON API (list, get, save), whose state the tests read directly and whose
// /check answers a command probe ({"problems": [...]}). It counts every request it
// received, so a test can say which writes reached it.
package site

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// Record is one saved record.
type Record struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Request is a request the site received.
type Request struct {
	Method, Path string
}

// Site is the running application.
type Site struct {
	URL string
	srv *http.Server

	mu       sync.Mutex
	records  []Record
	requests []Request
	resets   int
}

// Start serves the site on 127.0.0.1:0 until Close.
func Start() (*Site, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Site{URL: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/records", s.list)
	mux.HandleFunc("GET /api/records/{id}", s.get)
	mux.HandleFunc("POST /api/records", s.save)
	mux.HandleFunc("POST /admin/reset", s.reset)
	mux.HandleFunc("GET /check", s.check)
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, Request{r.Method, r.URL.Path})
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the site.
func (s *Site) Close() error { return s.srv.Close() }

// Records are the saved records.
func (s *Site) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record{}, s.records...)
}

// Requests are the requests received so far, in order.
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Writes counts the POSTs the site received.
func (s *Site) Writes() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost {
			n++
		}
	}
	return n
}

// Resets counts the resets that reached the site (the denied write's target).
func (s *Site) Resets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resets
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Site) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, s.Records())
}

func (s *Site) get(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	for _, rec := range s.Records() {
		if rec.ID == id {
			writeJSON(w, 200, rec)
			return
		}
	}
	writeJSON(w, 404, map[string]string{"error": "no such record"})
}

func (s *Site) save(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name     string `json:"name"`
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || in.Name == "" {
		writeJSON(w, 400, map[string]string{"error": "name is required"})
		return
	}
	s.mu.Lock()
	rec := Record{ID: len(s.records) + 1, Name: in.Name, Email: in.Email}
	s.records = append(s.records, rec)
	s.mu.Unlock()
	writeJSON(w, 201, rec)
}

func (s *Site) reset(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.records = nil
	s.resets++
	s.mu.Unlock()
	writeJSON(w, 200, map[string]bool{"reset": true})
}

// check is the command probe's report: exactly one record named name with that email.
func (s *Site) check(w http.ResponseWriter, r *http.Request) {
	name, email := r.URL.Query().Get("name"), r.URL.Query().Get("email")
	n := 0
	for _, rec := range s.Records() {
		if rec.Name == name && rec.Email == email {
			n++
		}
	}
	problems := []string{}
	switch {
	case n == 0:
		problems = append(problems, fmt.Sprintf("no record named %q", name))
	case n > 1:
		problems = append(problems, fmt.Sprintf("%d records named %q: a duplicate", n, name))
	}
	writeJSON(w, 200, map[string]any{"problems": problems})
}

func (s *Site) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, pageHTML)
}

const pageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Contacts</title></head>
<body>
<h1>Contacts</h1>
<form id="form" onsubmit="return false">
  <label>Name <input id="name" name="name"></label>
  <label>Email <input id="email" name="email"></label>
  <label>Password <input id="password" name="password" type="password"></label>
  <button id="save" type="button" onclick="saveRecord()">Save</button>
  <button id="reset" type="button" onclick="deleteAll()">Delete all</button>
</form>
<p id="status"></p>
<ul id="list"></ul>
<script>
async function load() {
  const r = await fetch('/api/records');
  const list = await r.json();
  document.getElementById('list').innerHTML = '';
  for (const rec of list) {
    const li = document.createElement('li');
    li.textContent = rec.name + ' <' + rec.email + '>';
    li.className = 'record';
    document.getElementById('list').appendChild(li);
  }
  document.body.dataset.loaded = '1';
}
async function saveRecord() {
  const st = document.getElementById('status');
  st.textContent = '';
  try {
    const r = await fetch('/api/records', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({name: document.getElementById('name').value, email: document.getElementById('email').value,
        password: document.getElementById('password').value})});
    st.textContent = r.ok ? 'Saved' : 'Error ' + r.status;
  } catch (e) {
    st.textContent = 'Error network';
  }
}
async function deleteAll() {
  const st = document.getElementById('status');
  try {
    const r = await fetch('/admin/reset', {method: 'POST'});
    st.textContent = r.ok ? 'Deleted' : 'Error ' + r.status;
  } catch (e) {
    st.textContent = 'Error network';
  }
}
load();
</script>
</body></html>
`
