//===- JsonLite.cpp - a small JSON reader for runtime files ---------------===//
//
// Part of Ober-Train's runtime (no MLIR, no LLVM).
//
//===----------------------------------------------------------------------===//

#include "JsonLite.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

using namespace ober::rt::json;

namespace {
constexpr int kMaxDepth = 64;

class Parser {
public:
  explicit Parser(const std::string &text) : s(text) {}

  bool run(Value &out, std::string &error) {
    if (!value(out, 0) || (skip(), pos != s.size())) {
      if (message.empty())
        message = "unexpected trailing text";
      error = message + " at offset " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  const std::string &s;
  size_t pos = 0;
  std::string message;

  bool fail(const char *m) {
    if (message.empty())
      message = m;
    return false;
  }
  void skip() {
    while (pos < s.size() &&
           (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0)
      return fail("invalid literal");
    pos += n;
    return true;
  }

  bool value(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    skip();
    if (pos >= s.size())
      return fail("unexpected end of input");
    char c = s[pos];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out.kind = Value::String;
      return string(out.string);
    }
    if (c == 't' || c == 'f') {
      out.kind = Value::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out.kind = Value::Null;
      return literal("null");
    }
    return number(out);
  }

  bool object(Value &out, int depth) {
    out.kind = Value::Object;
    ++pos;
    skip();
    if (pos < s.size() && s[pos] == '}')
      return ++pos, true;
    while (true) {
      skip();
      std::string key;
      if (pos >= s.size() || s[pos] != '"' || !string(key))
        return fail("expected a string key");
      skip();
      if (pos >= s.size() || s[pos] != ':')
        return fail("expected ':'");
      ++pos;
      Value v;
      if (!value(v, depth + 1))
        return false;
      if (!out.object.emplace(key, std::move(v)).second)
        return fail("duplicate key");
      skip();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == '}')
        return ++pos, true;
      return fail("expected ',' or '}'");
    }
  }

  bool array(Value &out, int depth) {
    out.kind = Value::Array;
    ++pos;
    skip();
    if (pos < s.size() && s[pos] == ']')
      return ++pos, true;
    while (true) {
      Value v;
      if (!value(v, depth + 1))
        return false;
      out.array.push_back(std::move(v));
      skip();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == ']')
        return ++pos, true;
      return fail("expected ',' or ']'");
    }
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | cp >> 12);
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | cp >> 18);
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(unsigned &cp) {
    if (pos + 4 > s.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s[pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= h - '0';
      else if (h >= 'a' && h <= 'f')
        cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        cp |= h - 'A' + 10;
      else
        return fail("bad \\u escape");
    }
    return true;
  }

  bool string(std::string &out) {
    ++pos; // opening quote
    while (pos < s.size()) {
      char c = s[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= s.size())
        break;
      char e = s[pos++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00 && pos + 1 < s.size() &&
            s[pos] == '\\' && s[pos + 1] == 'u') {
          pos += 2;
          unsigned low;
          if (!hex4(low))
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }

  bool number(Value &out) {
    size_t start = pos;
    if (pos < s.size() && s[pos] == '-')
      ++pos;
    bool isInteger = true;
    while (pos < s.size()) {
      char c = s[pos];
      if (c >= '0' && c <= '9') {
        ++pos;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        isInteger = false;
        ++pos;
      } else {
        break;
      }
    }
    std::string text = s.substr(start, pos - start);
    if (text.empty() || text == "-")
      return fail("expected a value");
    char *end = nullptr;
    errno = 0;
    if (isInteger) {
      out.kind = Value::Integer;
      out.integer = std::strtoll(text.c_str(), &end, 10);
      out.number = static_cast<double>(out.integer);
    } else {
      out.kind = Value::Number;
      out.number = std::strtod(text.c_str(), &end);
    }
    if (*end != '\0' || errno == ERANGE)
      return fail("malformed number");
    return true;
  }
};
} // namespace

bool ober::rt::json::parse(const std::string &text, Value &out,
                           std::string &error) {
  out = Value();
  return Parser(text).run(out, error);
}

std::string ober::rt::json::quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string Value::dump() const {
  switch (kind) {
  case Null: return "null";
  case Bool: return boolean ? "true" : "false";
  case Integer: return std::to_string(integer);
  case Number: return std::to_string(number);
  case String: return quote(string);
  case Array: {
    std::string out = "[";
    for (size_t i = 0; i < array.size(); ++i)
      out += (i ? "," : "") + array[i].dump();
    return out + "]";
  }
  case Object: {
    std::string out = "{";
    bool first = true;
    for (const auto &[k, v] : object) {
      out += (first ? "" : ",") + quote(k) + ":" + v.dump();
      first = false;
    }
    return out + "}";
  }
  }
  return "null";
}

std::string ober::rt::json::list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
