-- ecoready: run a stock sysbench workload with Zipfian-distributed row ids.
--
-- sysbench 1.0.x has no --rand-type=zipfian (it came after 1.0.20). The stock OLTP
-- scripts draw every row id through sysbench.rand.default (oltp_common.lua, get_id), so
-- this wrapper runs the stock script unchanged and replaces that one function with a
-- Zipfian generator: the method of Gray et al., "Quickly generating billion-record
-- synthetic databases" (SIGMOD 1994), as YCSB's ZipfianGenerator uses it.
--
-- Use: a stub sets the global ECOREADY_WORKLOAD (a stock script name such as
-- "oltp_read_only", or a path) and dofile()s this file. The exponent is --zipf_exp
-- (0 < theta < 1, default 0.8). Rank 1 is the smallest id of the range, rank 2 the next.

local workload = ECOREADY_WORKLOAD or os.getenv("ECOREADY_WORKLOAD")
if workload == nil or workload == "" then
   error("ecoready zipfian.lua: set ECOREADY_WORKLOAD to the workload script to wrap")
end

local script = workload
if not workload:find("/", 1, true) then
   script = package.searchpath(workload, package.path)
      or ("/usr/share/sysbench/" .. workload .. ".lua")
end
dofile(script)

-- sysbench reads the options table after loading the script, so this one is accepted
sysbench.cmdline.options = sysbench.cmdline.options or {}
sysbench.cmdline.options.zipf_exp =
   {"Zipfian exponent theta of the ecoready wrapper (0 < theta < 1)", 0.8}

-- zeta(n, theta) = sum of i^-theta for i = 1..n: exact up to EXACT_TERMS, then the
-- Euler-Maclaurin formula for the tail (error far below a double's precision here), so
-- large tables do not cost every thread millions of pow() calls at start.
local EXACT_TERMS = 10000

local function zeta(n, theta)
   local m = math.min(n, EXACT_TERMS)
   local sum = 0.0
   for i = 1, m do
      sum = sum + i ^ (-theta)
   end
   if n > m then
      local a, b = m + 1, n
      local function f(x) return x ^ (-theta) end
      local function df(x) return -theta * x ^ (-theta - 1) end
      sum = sum + (b ^ (1 - theta) - a ^ (1 - theta)) / (1 - theta)
         + (f(a) + f(b)) / 2 + (df(b) - df(a)) / 12
   end
   return sum
end

local generators = {} -- per range size: the constants of the method

local function constants(n)
   local g = generators[n]
   if g == nil then
      local theta = tonumber(sysbench.opt.zipf_exp)
      if theta == nil or theta <= 0 or theta >= 1 then
         error("ecoready zipfian.lua: --zipf_exp must be between 0 and 1 (exclusive), got "
                  .. tostring(sysbench.opt.zipf_exp))
      end
      local zetan = zeta(n, theta)
      g = {
         zetan = zetan,
         alpha = 1 / (1 - theta),
         eta = (1 - (2 / n) ^ (1 - theta)) / (1 - (1 + 2 ^ (-theta)) / zetan),
         second = 1 + 0.5 ^ theta,
      }
      generators[n] = g
   end
   return g
end

local function zipfian(a, b)
   local n = b - a + 1
   if n <= 1 then
      return a
   end
   local g = constants(n)
   local u = sysbench.rand.uniform_double()
   local uz = u * g.zetan
   if uz < 1 then
      return a
   end
   if uz < g.second then
      return a + 1
   end
   local v = a + math.floor(n * (g.eta * u - g.eta + 1) ^ g.alpha)
   if v > b then
      v = b
   end
   return v
end

sysbench.rand.default = zipfian
