//! Call-site resolution over the workspace index: receiver typing from local facts, method
//! lookup through base classes, namespace/import lookup, overload selection.

use super::index::{
    fun_at, sep, type_name, Class, ClassId, Fact, FunId, Import, Index, Site, SiteKind,
};
use super::util::{
    compatible, named_children, norm_type, overload_key, short_text, split_cpp, strip_template,
    type_category, unwrap_expr,
};
use crate::syntax::functions::FunctionKind;
use crate::syntax::lang::{self, field, kind, CallShape};
use crate::syntax::{Language, ParsedFile};
use std::cell::Cell;
use tree_sitter::Node;

/// Receiver typing recursion limit (a longer chain degrades to "unknown receiver").
const MAX_DEPTH: usize = 24;
/// Type-inference steps allowed per call site (bounds pathological alias chains).
const FUEL_PER_SITE: usize = 4000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    Fun(FunId),
    External(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// An instance of a class.
    Inst(ClassId),
    /// The class itself (static access, constructor call).
    Class(ClassId),
    /// A Python module (dotted name).
    Module(String),
    /// A JS/TS module file.
    Unit(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Ctx {
    pub unit: usize,
    pub fun: Option<FunId>,
    pub class: Option<ClassId>,
}

enum Callee<'t> {
    Name(String),
    Member { recv: Node<'t>, name: String },
    Super(String),
    Qualified(Vec<String>),
    New(Node<'t>),
    SuperCtor,
    ThisCtor,
    Direct(FunId),
    Opaque,
}

pub(super) struct Resolver<'a, 't> {
    ix: &'a Index<'t>,
    /// Fallback file for out-of-range unit ids (never expected; keeps lookups total).
    first: &'t ParsedFile,
    bases: Vec<Vec<ClassId>>,
    /// Precomputed method-lookup order per class.
    mros: Vec<Vec<ClassId>>,
    fuel: Cell<usize>,
    /// Python units by the last segment of their module name, in unit order: `find_module`
    /// looks at the units that can match instead of every unit (per lookup it was linear in
    /// the workspace, so resolving a workspace was quadratic).
    python_modules: std::collections::HashMap<&'a str, Vec<usize>>,
    /// Set when a depth or fuel limit degraded a result.
    pub degraded: Cell<bool>,
}

impl<'a, 't> Resolver<'a, 't> {
    /// A resolver over a non-empty index (`None` when there are no files).
    pub fn new(ix: &'a Index<'t>) -> Option<Self> {
        let first = ix.units.first()?.file;
        let mut python_modules: std::collections::HashMap<&'a str, Vec<usize>> = Default::default();
        for (i, u) in ix.units.iter().enumerate() {
            if u.lang == Language::Python {
                if let Some(last) = u.module.last() {
                    python_modules.entry(last.as_str()).or_default().push(i);
                }
            }
        }
        let mut r = Resolver {
            ix,
            first,
            bases: vec![Vec::new(); ix.classes.len()],
            mros: Vec::new(),
            fuel: Cell::new(usize::MAX),
            python_modules,
            degraded: Cell::new(false),
        };
        let mut bases = Vec::with_capacity(ix.classes.len());
        for (cid, c) in ix.classes.iter().enumerate() {
            let ctx = Ctx {
                unit: c.unit,
                fun: c.enclosing_fun,
                class: c.outer,
            };
            let file = r.file(c.unit);
            let mut bs = Vec::new();
            for b in &c.bases_written {
                r.fuel.set(FUEL_PER_SITE);
                if let Some(bc) = r.resolve_class(file.node_text(*b), ctx, 0) {
                    if bc != cid && !bs.contains(&bc) {
                        bs.push(bc);
                    }
                }
            }
            bases.push(bs);
        }
        r.bases = bases;
        let mut memo: Vec<Option<Vec<ClassId>>> = vec![None; ix.classes.len()];
        r.mros = (0..ix.classes.len())
            .map(|c| r.compute_mro(c, &mut memo))
            .collect();
        Some(r)
    }

    /// Python and Solidity use C3 linearisation (Solidity lists bases from "most base" to
    /// "most derived", so they are merged right to left); Java, C++ and JS search the
    /// class, then its bases depth first, left to right. Inconsistent hierarchies fall back
    /// to the depth-first order.
    fn compute_mro(&self, c: ClassId, memo: &mut Vec<Option<Vec<ClassId>>>) -> Vec<ClassId> {
        let lang = self
            .class(c)
            .map(|c| self.lang(c.unit))
            .unwrap_or(Language::Python);
        if matches!(lang, Language::Python | Language::Solidity) {
            if let Some(l) = self.c3(c, memo, 0) {
                return l;
            }
        }
        self.dfs_order(c, lang)
    }

    fn c3(
        &self,
        c: ClassId,
        memo: &mut Vec<Option<Vec<ClassId>>>,
        depth: usize,
    ) -> Option<Vec<ClassId>> {
        if let Some(Some(l)) = memo.get(c) {
            return Some(l.clone());
        }
        if depth > 64 {
            return None;
        }
        let lang = self.class(c).map(|x| self.lang(x.unit))?;
        let mut bases = self.bases.get(c).cloned().unwrap_or_default();
        if lang == Language::Solidity {
            bases.reverse();
        }
        let mut seqs: Vec<Vec<ClassId>> = Vec::new();
        for &b in &bases {
            seqs.push(self.c3(b, memo, depth + 1)?);
        }
        seqs.push(bases);
        // Very deep or wide hierarchies use the depth-first order instead (bounded work).
        if seqs.iter().map(Vec::len).sum::<usize>() > 128 {
            return None;
        }
        let mut out = vec![c];
        for _ in 0..1024 {
            seqs.retain(|s| !s.is_empty());
            if seqs.is_empty() {
                if let Some(slot) = memo.get_mut(c) {
                    *slot = Some(out.clone());
                }
                return Some(out);
            }
            let head = seqs
                .iter()
                .filter_map(|s| s.first().copied())
                .find(|h| !seqs.iter().any(|s| s.iter().skip(1).any(|x| x == h)))?;
            if out.contains(&head) {
                return None;
            }
            out.push(head);
            for s in seqs.iter_mut() {
                if s.first() == Some(&head) {
                    s.remove(0);
                }
            }
        }
        None
    }

    fn file(&self, unit: usize) -> &'t ParsedFile {
        match self.ix.units.get(unit) {
            Some(u) => u.file,
            None => self.first,
        }
    }

    fn lang(&self, unit: usize) -> Language {
        self.ix
            .units
            .get(unit)
            .map(|u| u.lang)
            .unwrap_or(Language::Python)
    }

    fn class(&self, c: ClassId) -> Option<&'a Class<'t>> {
        self.ix.classes.get(c)
    }

    fn tick(&self) -> bool {
        let f = self.fuel.get();
        if f == 0 {
            self.degraded.set(true);
            return false;
        }
        self.fuel.set(f - 1);
        true
    }

    pub fn ctx_of(&self, fun: FunId) -> Ctx {
        match self.ix.funs.get(fun) {
            Some(f) => Ctx {
                unit: f.unit,
                fun: Some(fun),
                class: self.enclosing_class(fun),
            },
            None => Ctx {
                unit: 0,
                fun: None,
                class: None,
            },
        }
    }

    /// The class whose members are implicitly in scope: the function's own class (also for
    /// out-of-class C++ bodies), else the lexically enclosing class of it or its parents.
    fn enclosing_class(&self, fun: FunId) -> Option<ClassId> {
        self.chain(Some(fun))
            .into_iter()
            .find_map(|f| self.ix.funs.get(f).and_then(|x| x.class.or(x.scope_class)))
    }

    /// The function chain from `fun` outwards.
    fn chain(&self, fun: Option<FunId>) -> Vec<FunId> {
        let mut out = Vec::new();
        let mut cur = fun;
        while let Some(f) = cur {
            if out.len() > 256 || out.contains(&f) {
                break;
            }
            out.push(f);
            cur = self.ix.funs.get(f).and_then(|x| x.parent);
        }
        out
    }

    /// Classes in method-lookup order: the class, then its bases (see `compute_mro`).
    pub fn mro(&self, c: ClassId) -> Vec<ClassId> {
        match self.mros.get(c) {
            Some(m) => m.clone(),
            None => vec![c],
        }
    }

    fn dfs_order(&self, c: ClassId, lang: Language) -> Vec<ClassId> {
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![c];
        while let Some(k) = stack.pop() {
            if out.len() > 256 || !seen.insert(k) {
                continue;
            }
            out.push(k);
            let bs = self.bases.get(k).cloned().unwrap_or_default();
            if lang == Language::Solidity {
                stack.extend(bs.iter().copied());
            } else {
                stack.extend(bs.iter().rev().copied());
            }
        }
        out
    }

    /// Methods named `name` of the first class in `c`'s lookup order that has any.
    fn lookup_method(&self, c: ClassId, name: &str, skip_self: bool) -> Vec<FunId> {
        let order = self.mros.get(c).map(Vec::as_slice).unwrap_or(&[]);
        for (i, &k) in order.iter().enumerate() {
            if skip_self && i == 0 {
                continue;
            }
            if let Some(ms) = self.class(k).and_then(|cls| cls.methods.get(name)) {
                let ms: Vec<FunId> = ms
                    .iter()
                    .copied()
                    .filter(|&m| {
                        self.ix
                            .funs
                            .get(m)
                            .is_some_and(|f| f.f.kind != FunctionKind::Lambda)
                    })
                    .collect();
                if !ms.is_empty() {
                    return ms;
                }
            }
        }
        Vec::new()
    }

    /// The constructors of a class (Python `__init__` and JS `constructor` are inherited).
    fn ctors(&self, c: ClassId) -> Vec<FunId> {
        let Some(cls) = self.class(c) else {
            return Vec::new();
        };
        match self.lang(cls.unit) {
            Language::Python => self.lookup_method(c, "__init__", false),
            Language::JavaScript | Language::TypeScript => {
                self.lookup_method(c, "constructor", false)
            }
            Language::Solidity => cls.methods.get("constructor").cloned().unwrap_or_default(),
            _ => cls
                .methods
                .get(&cls.simple)
                .map(|ms| {
                    ms.iter()
                        .copied()
                        .filter(|&m| {
                            self.ix.funs.get(m).is_some_and(|f| {
                                f.f.kind == FunctionKind::Constructor
                                    && !f.f.simple_name.starts_with('~')
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    // ----- class and module lookup -----------------------------------------------------------

    /// C++ namespaces enclosing the context, innermost first, ending with the global "".
    fn ns_chain(&self, ctx: Ctx) -> Vec<String> {
        let base = match (
            ctx.fun.and_then(|f| self.ix.funs.get(f)),
            ctx.class.and_then(|c| self.class(c)),
        ) {
            (Some(f), _) => {
                let mut segs = split_cpp(&f.key);
                segs.pop();
                segs
            }
            (None, Some(c)) => split_cpp(&super::index::strip_anon(&c.qname)),
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        for i in (0..=base.len()).rev() {
            out.push(base.get(..i).map(|s| s.join("::")).unwrap_or_default());
        }
        out
    }

    fn pick_class(&self, cands: &[ClassId], ctx: Ctx) -> Option<ClassId> {
        if let Some(c) = cands
            .iter()
            .find(|&&c| self.class(c).is_some_and(|k| k.unit == ctx.unit))
        {
            return Some(*c);
        }
        let lang = self.lang(ctx.unit);
        if lang == Language::Java {
            let pkg = &self.ix.units.get(ctx.unit)?.info.package;
            let same_pkg: Vec<ClassId> = cands
                .iter()
                .copied()
                .filter(|&c| {
                    self.class(c)
                        .and_then(|k| self.ix.units.get(k.unit))
                        .is_some_and(|u| &u.info.package == pkg)
                })
                .collect();
            if let Some(c) = same_pkg.first() {
                return Some(*c);
            }
            // `import p.*`: a class of an imported package; otherwise only an unambiguous name.
            let stars = &self.ix.units.get(ctx.unit)?.info.star_imports;
            let imported: Vec<ClassId> = cands
                .iter()
                .copied()
                .filter(|&c| {
                    self.class(c)
                        .and_then(|k| self.ix.units.get(k.unit))
                        .is_some_and(|u| stars.contains(&u.info.package))
                })
                .collect();
            if let [one] = imported.as_slice() {
                return Some(*one);
            }
            return match cands {
                [one] => Some(*one),
                _ => None,
            };
        }
        match lang {
            Language::Python | Language::JavaScript | Language::TypeScript => None,
            _ => cands.first().copied(),
        }
    }

    fn class_q(&self, qname: &str, ctx: Ctx) -> Option<ClassId> {
        let cands = self.ix.class_by_qname.get(qname)?;
        self.pick_class(cands, ctx)
    }

    /// Resolves a written type (or class name) to a class of the workspace.
    pub fn resolve_class(&self, raw: &str, ctx: Ctx, depth: usize) -> Option<ClassId> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return None;
        }
        let lang = self.lang(ctx.unit);
        let name = norm_type(raw, lang)?;
        let unit = self.ix.units.get(ctx.unit)?;
        match lang {
            Language::C => None,
            Language::Cpp => {
                if let Some(alias) = unit.info.type_aliases.get(&name) {
                    let file = self.file(ctx.unit);
                    return self.resolve_class(file.node_text(*alias), ctx, depth + 1);
                }
                let name: String = split_cpp(&name)
                    .iter()
                    .map(|s| strip_template(s))
                    .collect::<Vec<_>>()
                    .join("::");
                for p in self.ns_chain(ctx) {
                    let q = if p.is_empty() {
                        name.clone()
                    } else {
                        format!("{p}::{name}")
                    };
                    if let Some(c) = self.class_q(&q, ctx) {
                        return Some(c);
                    }
                }
                for ns in &unit.info.using_namespaces {
                    if let Some(c) = self.class_q(&format!("{ns}::{name}"), ctx) {
                        return Some(c);
                    }
                }
                if let Some(full) = unit.info.using_decls.get(&name) {
                    if let Some(c) = self.class_q(full, ctx) {
                        return Some(c);
                    }
                }
                let suffix = format!("::{name}");
                let found: Vec<&String> = self
                    .ix
                    .class_by_qname
                    .keys()
                    .filter(|q| q.ends_with(&suffix) || super::index::strip_anon(q) == name)
                    .collect();
                match found.as_slice() {
                    [one] => self.class_q(one, ctx),
                    _ => None,
                }
            }
            Language::Java => {
                let mut cur = ctx.class;
                let mut guard = 0;
                while let Some(c) = cur {
                    guard += 1;
                    if guard > 64 {
                        break;
                    }
                    let cls = self.class(c)?;
                    if cls.simple == name {
                        return Some(c);
                    }
                    for k in self.mro(c) {
                        if let Some(kc) = self.class(k) {
                            if let Some(found) =
                                self.class_q(&format!("{}.{}", kc.qname, name), ctx)
                            {
                                return Some(found);
                            }
                        }
                    }
                    cur = cls.outer;
                }
                // Drop a package prefix: `com.x.Foo.Inner` -> `Foo.Inner`.
                let segs: Vec<&str> = name.split('.').collect();
                let start = segs
                    .iter()
                    .position(|s| s.starts_with(|c: char| c.is_uppercase()))
                    .unwrap_or(0);
                let rel = segs
                    .get(start..)
                    .map(|s| s.join("."))
                    .unwrap_or_else(|| name.clone());
                if let Some(cands) = self.ix.class_by_qname.get(&rel) {
                    // An explicit import decides between same-named classes.
                    if let Some(Import::JavaClass(q)) = unit
                        .info
                        .imports
                        .get(segs.get(start).copied().unwrap_or(""))
                    {
                        let pkg = q.rsplit_once('.').map(|(p, _)| p).unwrap_or("");
                        if let Some(c) = cands.iter().find(|&&c| {
                            self.class(c)
                                .and_then(|k| self.ix.units.get(k.unit))
                                .is_some_and(|u| u.info.package == pkg)
                        }) {
                            return Some(*c);
                        }
                    }
                    return self.pick_class(cands, ctx);
                }
                // A nested class referred to by its simple name from elsewhere is not visible.
                None
            }
            Language::Solidity => {
                let n = name.rsplit('.').next().unwrap_or(&name);
                self.class_q(n, ctx)
            }
            Language::Python | Language::JavaScript | Language::TypeScript => {
                let segs: Vec<&str> = name.split('.').collect();
                if let [single] = segs.as_slice() {
                    for f in self.chain(ctx.fun) {
                        if let Some(fun) = self.ix.funs.get(f) {
                            let q = format!("{}.{}", fun.f.name, single);
                            if let Some(c) = self.class_q(&q, ctx) {
                                return Some(c);
                            }
                        }
                    }
                    if let Some(c) = self.class_q(single, ctx) {
                        return Some(c);
                    }
                    if let Some(imp) = unit.info.imports.get(*single) {
                        if let Some(Ty::Class(c)) = self.import_ty(imp, ctx, depth + 1) {
                            return Some(c);
                        }
                    }
                    for m in &unit.info.star_imports {
                        if let Some(u) = self.find_module(m, ctx.unit) {
                            if let Some(c) = self.top_class(u, single) {
                                return Some(c);
                            }
                        }
                    }
                    return None;
                }
                // Dotted: `mod.Cls`, `Outer.Inner`.
                let mut ty = self.name_type(segs.first()?, ctx, depth + 1)?;
                for s in segs.iter().skip(1) {
                    ty = self.member_type(&ty, s, ctx, depth + 1)?;
                }
                match ty {
                    Ty::Class(c) => Some(c),
                    _ => None,
                }
            }
        }
    }

    fn top_class(&self, unit: usize, name: &str) -> Option<ClassId> {
        self.ix
            .class_by_qname
            .get(name)?
            .iter()
            .copied()
            .find(|&c| self.class(c).is_some_and(|k| k.unit == unit))
    }

    /// Top-level functions named `name` of a unit.
    fn top_funs(&self, unit: usize, name: &str) -> Vec<FunId> {
        self.ix
            .by_key
            .get(name)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&f| {
                        self.ix.funs.get(f).is_some_and(|x| {
                            x.unit == unit
                                && x.parent.is_none()
                                && x.class.is_none()
                                && x.f.kind != FunctionKind::Lambda
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Finds the unit of a Python module (dotted) or JS/Solidity import path.
    fn find_module(&self, spec: &str, from: usize) -> Option<usize> {
        let lang = self.lang(from);
        let from_path = self.ix.units.get(from)?.path.replace('\\', "/");
        if matches!(lang, Language::Python) {
            let want: Vec<&str> = spec.split('.').filter(|s| !s.is_empty()).collect();
            if want.is_empty() {
                return None;
            }
            let mut best: Vec<(usize, usize)> = Vec::new();
            let candidates = want
                .last()
                .and_then(|last| self.python_modules.get(last))
                .map_or(&[][..], Vec::as_slice);
            for &i in candidates {
                let Some(u) = self.ix.units.get(i) else {
                    continue;
                };
                if u.lang != Language::Python || u.module.len() < want.len() {
                    continue;
                }
                let tail = u.module.get(u.module.len() - want.len()..)?;
                if tail.iter().zip(&want).all(|(a, b)| a == b) {
                    best.push((u.module.len() - want.len(), i));
                }
            }
            best.sort();
            return match best.as_slice() {
                [] => None,
                [one] => Some(one.1),
                [a, b, ..] if a.0 < b.0 => Some(a.1),
                _ => {
                    // Same depth: prefer the module next to the importer.
                    let dir = from_path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                    best.iter()
                        .find(|(_, i)| {
                            self.ix
                                .units
                                .get(*i)
                                .is_some_and(|u| u.path.starts_with(dir))
                        })
                        .map(|x| x.1)
                }
            };
        }
        // Path-like specs are resolved relative to the importing file.
        let dir: Vec<&str> = match from_path.rsplit_once('/') {
            Some((d, _)) => d.split('/').collect(),
            None => Vec::new(),
        };
        let mut segs: Vec<&str> = if spec.starts_with('.') {
            dir
        } else {
            Vec::new()
        };
        for s in spec.split('/') {
            match s {
                "" | "." => {}
                ".." => {
                    segs.pop();
                }
                s => segs.push(s),
            }
        }
        let target = segs.join("/");
        let strip_ext = |p: &str| -> String {
            let p = p.replace('\\', "/");
            let file = p.rsplit('/').next().unwrap_or(&p).to_string();
            match file.rfind('.') {
                Some(i) if i > 0 => p
                    .get(..p.len() - (file.len() - i))
                    .unwrap_or(&p)
                    .to_string(),
                _ => p,
            }
        };
        let target_noext = strip_ext(&target);
        let mut found = None;
        for (i, u) in self.ix.units.iter().enumerate() {
            let p = strip_ext(&u.path);
            let p = p.trim_start_matches("./");
            let t = target_noext.trim_start_matches("./");
            if p == t
                || p == format!("{t}/index")
                || (!spec.starts_with('.') && p.ends_with(&format!("/{t}")))
            {
                if found.is_some() {
                    return None;
                }
                found = Some(i);
            }
        }
        found
    }

    /// The type an import binding denotes.
    fn import_ty(&self, imp: &Import, ctx: Ctx, depth: usize) -> Option<Ty> {
        let lang = self.lang(ctx.unit);
        match imp {
            Import::Module(m) => match lang {
                Language::Python => Some(Ty::Module(m.clone())),
                _ => self.find_module(m, ctx.unit).map(Ty::Unit),
            },
            Import::Symbol { module, name } => {
                let u = self.find_module(module, ctx.unit);
                if let Some(u) = u {
                    if name == "default" && lang != Language::Python {
                        return None;
                    }
                    if let Some(c) = self.top_class(u, name) {
                        return Some(Ty::Class(c));
                    }
                    if let Some(facts) = self
                        .ix
                        .units
                        .get(u)
                        .and_then(|x| x.info.module_vars.get(name))
                    {
                        let uctx = Ctx {
                            unit: u,
                            fun: None,
                            class: None,
                        };
                        return self.facts_type(facts, uctx, depth + 1);
                    }
                }
                if lang == Language::Python {
                    let sub = format!("{module}.{name}");
                    if self.find_module(&sub, ctx.unit).is_some() {
                        return Some(Ty::Module(sub));
                    }
                }
                None
            }
            _ => None,
        }
    }

    /// JS `export default function f` / `export default class C`.
    fn default_export(&self, unit: usize) -> Option<Target> {
        let f = self.ix.funs.iter().enumerate().find(|(_, f)| {
            f.unit == unit
                && f.parent.is_none()
                && f.f.node.parent().is_some_and(|p| {
                    p.kind() == kind::EXPORT_STATEMENT
                        && self.file(unit).node_text(p).starts_with("export default")
                })
        });
        f.map(|(i, _)| Target::Fun(i))
    }

    // ----- expression typing -----------------------------------------------------------------

    fn is_null(kind: &str) -> bool {
        matches!(
            kind,
            kind::NONE | kind::NULL | kind::NULL_LITERAL | kind::UNDEFINED | "nullptr"
        )
    }

    fn facts_type(&self, facts: &[Fact<'t>], ctx: Ctx, depth: usize) -> Option<Ty> {
        let with_ctx: Vec<(Fact<'t>, Ctx)> = facts.iter().map(|f| (*f, ctx)).collect();
        self.facts_type_ctx(&with_ctx, depth)
    }

    /// Type from a variable's facts: a declared type wins, refined to the class of the only
    /// assigned value when that is a subclass (`Shape s = new Square()`); otherwise all
    /// assigned values must agree (null/None assignments ignored).
    fn facts_type_ctx(&self, facts: &[(Fact<'t>, Ctx)], depth: usize) -> Option<Ty> {
        let values: Vec<(Node<'t>, Ctx)> = facts
            .iter()
            .filter_map(|(f, c)| match f {
                Fact::Value(v) if !Self::is_null(unwrap_expr(*v).kind()) => Some((*v, *c)),
                _ => None,
            })
            .collect();
        if let Some((Fact::OfClass(c), _)) =
            facts.iter().find(|(f, _)| matches!(f, Fact::OfClass(_)))
        {
            return Some(Ty::Inst(*c));
        }
        if let Some((Fact::Declared(t), ctx)) =
            facts.iter().find(|(f, _)| matches!(f, Fact::Declared(_)))
        {
            let file = self.file(ctx.unit);
            let declared = self.resolve_class(file.node_text(*t), *ctx, depth + 1)?;
            if let [(v, vctx)] = values.as_slice() {
                if let Some(Ty::Inst(k)) = self.type_of(*v, *vctx, depth + 1) {
                    if k != declared && self.mro(k).contains(&declared) {
                        return Some(Ty::Inst(k));
                    }
                }
            }
            return Some(Ty::Inst(declared));
        }
        if facts.iter().any(|(f, _)| matches!(f, Fact::Opaque)) {
            return None;
        }
        let mut out: Option<Ty> = None;
        for (v, ctx) in values {
            let t = self.type_of(v, ctx, depth + 1)?;
            if out.as_ref().is_some_and(|o| *o != t) {
                return None;
            }
            out = Some(t);
        }
        out
    }

    /// The type of a field of a class instance (searching bases), if known.
    fn field_type(&self, c: ClassId, name: &str, depth: usize) -> Option<Ty> {
        for k in self.mro(c) {
            let Some(cls) = self.class(k) else { continue };
            let Some(facts) = cls.fields.get(name) else {
                continue;
            };
            let with_ctx: Vec<(Fact<'t>, Ctx)> = facts
                .iter()
                .map(|(f, fun)| {
                    (
                        *f,
                        Ctx {
                            unit: cls.unit,
                            fun: *fun,
                            class: Some(k),
                        },
                    )
                })
                .collect();
            return self.facts_type_ctx(&with_ctx, depth + 1);
        }
        None
    }

    fn member_type(&self, ty: &Ty, name: &str, ctx: Ctx, depth: usize) -> Option<Ty> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return None;
        }
        match ty {
            Ty::Inst(c) => self.field_type(*c, name, depth + 1),
            Ty::Class(c) => {
                let cls = self.class(*c)?;
                let s = sep(self.lang(cls.unit));
                for k in self.mro(*c) {
                    let kc = self.class(k)?;
                    if let Some(n) = self.class_q(
                        &format!("{}{}{}", kc.qname, s, name),
                        Ctx {
                            unit: kc.unit,
                            ..ctx
                        },
                    ) {
                        return Some(Ty::Class(n));
                    }
                }
                self.field_type(*c, name, depth + 1)
            }
            Ty::Module(m) => {
                if let Some(u) = self.find_module(m, ctx.unit) {
                    if let Some(c) = self.top_class(u, name) {
                        return Some(Ty::Class(c));
                    }
                    let uctx = Ctx {
                        unit: u,
                        fun: None,
                        class: None,
                    };
                    if let Some(facts) = self
                        .ix
                        .units
                        .get(u)
                        .and_then(|x| x.info.module_vars.get(name))
                    {
                        return self.facts_type(facts, uctx, depth + 1);
                    }
                    if let Some(imp) = self.ix.units.get(u).and_then(|x| x.info.imports.get(name)) {
                        return self.import_ty(imp, uctx, depth + 1);
                    }
                    let stars = self
                        .ix
                        .units
                        .get(u)
                        .map(|x| x.info.star_imports.clone())
                        .unwrap_or_default();
                    for m in stars {
                        if let Some(c) = self
                            .find_module(&m, u)
                            .and_then(|t| self.top_class(t, name))
                        {
                            return Some(Ty::Class(c));
                        }
                    }
                }
                let sub = format!("{m}.{name}");
                // A package directory without `__init__.py` among the units still names modules.
                let is_pkg = self.ix.units.iter().any(|u| {
                    let dotted = format!(".{}.", u.module.join("."));
                    u.lang == Language::Python && dotted.contains(&format!(".{sub}."))
                });
                if is_pkg || self.find_module(&sub, ctx.unit).is_some() {
                    Some(Ty::Module(sub))
                } else {
                    None
                }
            }
            Ty::Unit(u) => {
                if let Some(c) = self.top_class(*u, name) {
                    return Some(Ty::Class(c));
                }
                let uctx = Ctx {
                    unit: *u,
                    fun: None,
                    class: None,
                };
                let facts = self.ix.units.get(*u)?.info.module_vars.get(name)?;
                self.facts_type(facts, uctx, depth + 1)
            }
        }
    }

    /// Python: the `self`/`cls` binding visible in the context.
    fn python_receiver(&self, name: &str, ctx: Ctx) -> Option<Ty> {
        let fun = ctx.fun?;
        let (self_name, class) = self.ix.python_self(fun)?;
        if self_name != name {
            return None;
        }
        // The method that owns the receiver: classmethods bind the class.
        let owner = self.chain(Some(fun)).into_iter().find(|&f| {
            self.ix.funs.get(f).is_some_and(|x| {
                matches!(x.f.kind, FunctionKind::Method | FunctionKind::Constructor)
            })
        })?;
        let is_cm = self.ix.funs.get(owner).is_some_and(|x| x.py_classmethod);
        Some(if is_cm {
            Ty::Class(class)
        } else {
            Ty::Inst(class)
        })
    }

    /// The type a bare name denotes in a context.
    fn name_type(&self, name: &str, ctx: Ctx, depth: usize) -> Option<Ty> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return None;
        }
        let lang = self.lang(ctx.unit);
        if lang == Language::Python {
            if let Some(t) = self.python_receiver(name, ctx) {
                return Some(t);
            }
        }
        if name == "this" && matches!(lang, Language::Solidity | Language::Java | Language::Cpp) {
            return ctx.class.map(Ty::Inst);
        }
        for s in self.chain(ctx.fun) {
            let Some(fun) = self.ix.funs.get(s) else {
                continue;
            };
            let sctx = self.ctx_of(s);
            if let Some((_, ty)) = fun.params.iter().find(|(n, _)| n == name) {
                let file = self.file(fun.unit);
                return ty
                    .and_then(|t| self.resolve_class(file.node_text(t), sctx, depth + 1))
                    .map(Ty::Inst);
            }
            if let Some(facts) = self.ix.locals.get(&(s, name.to_string())) {
                return self.facts_type(facts, sctx, depth + 1);
            }
        }
        if matches!(lang, Language::Java | Language::Cpp | Language::Solidity) {
            let mut cur = ctx.class;
            let mut guard = 0;
            while let Some(c) = cur {
                guard += 1;
                if guard > 64 {
                    break;
                }
                if self
                    .mro(c)
                    .iter()
                    .any(|&k| self.class(k).is_some_and(|x| x.fields.contains_key(name)))
                {
                    return self.field_type(c, name, depth + 1);
                }
                cur = if lang == Language::Java {
                    self.class(c).and_then(|x| x.outer)
                } else {
                    None
                };
            }
        }
        let unit = self.ix.units.get(ctx.unit)?;
        if let Some(facts) = unit.info.module_vars.get(name) {
            let uctx = Ctx {
                unit: ctx.unit,
                fun: None,
                class: None,
            };
            return self.facts_type(facts, uctx, depth + 1);
        }
        if let Some(c) = self.resolve_class(name, ctx, depth + 1) {
            return Some(Ty::Class(c));
        }
        if let Some(imp) = unit.info.imports.get(name) {
            return self.import_ty(imp, ctx, depth + 1);
        }
        None
    }

    /// The static type of an expression, when local facts determine it.
    pub fn type_of(&self, node: Node<'t>, ctx: Ctx, depth: usize) -> Option<Ty> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return None;
        }
        let node = unwrap_expr(node);
        let file = self.file(ctx.unit);
        let lang = self.lang(ctx.unit);
        let field = |n: &str| node.child_by_field_name(n);
        match node.kind() {
            kind::IDENTIFIER | kind::TYPE_IDENTIFIER => {
                self.name_type(file.node_text(node), ctx, depth + 1)
            }
            kind::THIS => ctx.class.map(Ty::Inst),
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::MEMBER_EXPRESSION
            | kind::FIELD_EXPRESSION => {
                let (obj, name) = match node.kind() {
                    kind::ATTRIBUTE => (field(field::OBJECT), field(field::ATTRIBUTE)),
                    kind::FIELD_ACCESS => (field(field::OBJECT), field(field::FIELD)),
                    kind::FIELD_EXPRESSION => (field(field::ARGUMENT), field(field::FIELD)),
                    _ => (field(field::OBJECT), field(field::PROPERTY)),
                };
                let (obj, name) = (obj?, name?);
                let name = file.node_text(name);
                match self.type_of(obj, ctx, depth + 1) {
                    Some(t) => self.member_type(&t, name, ctx, depth + 1),
                    None if lang == Language::Java => self
                        .resolve_class(file.node_text(node), ctx, depth + 1)
                        .map(Ty::Class),
                    None => None,
                }
            }
            kind::CALL | kind::CALL_EXPRESSION | kind::METHOD_INVOCATION => {
                if node.kind() != kind::METHOD_INVOCATION {
                    if let Some(f) = field(field::FUNCTION) {
                        let f = unwrap_expr(f);
                        if matches!(
                            f.kind(),
                            kind::IDENTIFIER
                                | kind::ATTRIBUTE
                                | kind::QUALIFIED_IDENTIFIER
                                | kind::MEMBER_EXPRESSION
                        ) {
                            if let Some(Ty::Class(c)) = self.type_of_callee_name(f, ctx, depth + 1)
                            {
                                return Some(Ty::Inst(c));
                            }
                        }
                    }
                }
                let targets = self.resolve_call(node, ctx, depth + 1);
                match targets.as_slice() {
                    [Target::Fun(f)] => {
                        let fun = self.ix.funs.get(*f)?;
                        let ret = fun.ret_type?;
                        let rfile = self.file(fun.unit);
                        self.resolve_class(rfile.node_text(ret), self.ctx_of(*f), depth + 1)
                            .map(Ty::Inst)
                    }
                    _ => None,
                }
            }
            kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION => {
                let t = field(field::TYPE)
                    .or_else(|| field(field::CONSTRUCTOR))
                    .or_else(|| field(field::NAME))?;
                self.resolve_class(file.node_text(t), ctx, depth + 1)
                    .map(Ty::Inst)
            }
            kind::CAST_EXPRESSION => {
                let t = field(field::TYPE)?;
                self.resolve_class(file.node_text(t), ctx, depth + 1)
                    .map(Ty::Inst)
            }
            kind::POINTER_EXPRESSION => self.type_of(field(field::ARGUMENT)?, ctx, depth + 1),
            kind::AS_EXPRESSION | kind::SATISFIES_EXPRESSION => {
                let kids = named_children(node);
                let t = kids.get(1)?;
                self.resolve_class(file.node_text(*t), ctx, depth + 1)
                    .map(Ty::Inst)
            }
            _ => None,
        }
    }

    /// Type of a callee expression that may name a class (`Foo(...)`, `mod.Foo(...)`).
    fn type_of_callee_name(&self, f: Node<'t>, ctx: Ctx, depth: usize) -> Option<Ty> {
        let file = self.file(ctx.unit);
        if f.kind() == kind::QUALIFIED_IDENTIFIER {
            return self
                .resolve_class(file.node_text(f), ctx, depth + 1)
                .map(Ty::Class);
        }
        self.type_of(f, ctx, depth + 1)
    }

    // ----- call sites --------------------------------------------------------------------------

    fn args_of(&self, node: Node<'t>, lang: Language) -> Vec<Node<'t>> {
        match lang {
            Language::Solidity => named_children(node)
                .into_iter()
                .filter(|c| c.kind() == kind::CALL_ARGUMENT)
                .map(|c| named_children(c).first().copied().unwrap_or(c))
                .collect(),
            _ => node
                .child_by_field_name(field::ARGUMENTS)
                .map(named_children)
                .unwrap_or_default()
                .into_iter()
                .collect(),
        }
    }

    fn decompose(&self, node: Node<'t>, ctx: Ctx) -> Callee<'t> {
        let file = self.file(ctx.unit);
        let lang = self.lang(ctx.unit);
        let text = |n: Node<'_>| file.node_text(n).to_string();
        let spec = lang::spec(lang);
        let Some(call) = spec.call(node) else {
            return Callee::Opaque;
        };
        match call.shape {
            CallShape::Method => {
                let Some(name) = call.name.map(text) else {
                    return Callee::Opaque;
                };
                match call.receiver {
                    None => Callee::Name(name),
                    Some(o) if spec.is(o, lang::Class::Super) => Callee::Super(name),
                    Some(o) => Callee::Member { recv: o, name },
                }
            }
            CallShape::New => Callee::New(call.function),
            CallShape::ThisCtor => Callee::ThisCtor,
            CallShape::SuperCtor => Callee::SuperCtor,
            CallShape::Call => {
                let f = unwrap_expr(call.function);
                if let Some(fid) = fun_at(self.ix, f) {
                    return Callee::Direct(fid);
                }
                match (lang, f.kind()) {
                    (_, kind::IDENTIFIER) => Callee::Name(text(f)),
                    (Language::JavaScript | Language::TypeScript, kind::SUPER) => Callee::SuperCtor,
                    (Language::Python, kind::ATTRIBUTE) => {
                        let (Some(o), Some(a)) = (
                            f.child_by_field_name(field::OBJECT),
                            f.child_by_field_name(field::ATTRIBUTE),
                        ) else {
                            return Callee::Opaque;
                        };
                        let o = unwrap_expr(o);
                        let is_super = o.kind() == kind::CALL
                            && o.child_by_field_name(field::FUNCTION)
                                .is_some_and(|g| file.node_text(g) == "super");
                        if is_super {
                            Callee::Super(text(a))
                        } else {
                            Callee::Member {
                                recv: o,
                                name: text(a),
                            }
                        }
                    }
                    (_, kind::MEMBER_EXPRESSION) => {
                        let (Some(o), Some(p)) = (
                            f.child_by_field_name(field::OBJECT),
                            f.child_by_field_name(field::PROPERTY),
                        ) else {
                            return Callee::Opaque;
                        };
                        let o = unwrap_expr(o);
                        if o.kind() == kind::SUPER
                            || (lang == Language::Solidity && file.node_text(o) == "super")
                        {
                            Callee::Super(text(p))
                        } else {
                            Callee::Member {
                                recv: o,
                                name: text(p),
                            }
                        }
                    }
                    (Language::Cpp, kind::QUALIFIED_IDENTIFIER) => Callee::Qualified(
                        split_cpp(file.node_text(f))
                            .iter()
                            .map(|s| strip_template(s).to_string())
                            .collect(),
                    ),
                    (Language::Cpp, kind::TEMPLATE_FUNCTION) => {
                        match f.child_by_field_name(field::NAME) {
                            Some(n) if n.kind() == kind::IDENTIFIER => Callee::Name(text(n)),
                            Some(n) => Callee::Qualified(
                                split_cpp(file.node_text(n))
                                    .iter()
                                    .map(|s| strip_template(s).to_string())
                                    .collect(),
                            ),
                            None => Callee::Opaque,
                        }
                    }
                    (Language::C | Language::Cpp, kind::FIELD_EXPRESSION) => {
                        let (Some(o), Some(fl)) = (
                            f.child_by_field_name(field::ARGUMENT),
                            f.child_by_field_name(field::FIELD),
                        ) else {
                            return Callee::Opaque;
                        };
                        let name = if fl.kind() == kind::FIELD_IDENTIFIER {
                            text(fl)
                        } else {
                            // `obj.template get<T>()`, `obj.f<T>()`
                            let mut n = fl;
                            for _ in 0..8 {
                                match n
                                    .child_by_field_name(field::NAME)
                                    .or_else(|| named_children(n).first().copied())
                                {
                                    Some(x) => n = x,
                                    None => break,
                                }
                            }
                            strip_template(file.node_text(n)).to_string()
                        };
                        if o.kind() == kind::THIS {
                            return Callee::Member { recv: o, name };
                        }
                        Callee::Member { recv: o, name }
                    }
                    (Language::Solidity, kind::NEW_EXPRESSION) => {
                        match f.child_by_field_name(field::NAME) {
                            Some(t) => Callee::New(t),
                            None => Callee::Opaque,
                        }
                    }
                    _ => Callee::Opaque,
                }
            }
        }
    }

    fn external_text(&self, node: Node<'t>, ctx: Ctx) -> String {
        let file = self.file(ctx.unit);
        let f = node
            .child_by_field_name(field::FUNCTION)
            .map(unwrap_expr)
            .or_else(|| {
                if node.kind() == kind::METHOD_INVOCATION {
                    None
                } else {
                    node.child_by_field_name(field::TYPE)
                        .or_else(|| node.child_by_field_name(field::CONSTRUCTOR))
                }
            });
        match (node.kind(), f) {
            (kind::METHOD_INVOCATION, _) => {
                let name = node
                    .child_by_field_name(field::NAME)
                    .map(|n| file.node_text(n))
                    .unwrap_or("");
                match node.child_by_field_name(field::OBJECT) {
                    Some(o) => format!("{}.{}", short_text(file, o), name),
                    None => name.to_string(),
                }
            }
            (_, Some(f)) => short_text(file, f),
            _ => short_text(file, node),
        }
    }

    /// Resolves one call node (any `SiteKind::Call`/`New`/`ExplicitCtor` node).
    pub fn resolve_call(&self, node: Node<'t>, ctx: Ctx, depth: usize) -> Vec<Target> {
        if depth > MAX_DEPTH {
            self.degraded.set(true);
            return Vec::new();
        }
        let lang = self.lang(ctx.unit);
        let file = self.file(ctx.unit);
        let args = self.args_of(node, lang);
        let callee = self.decompose(node, ctx);
        let ext = || vec![Target::External(self.external_text(node, ctx))];
        let funs = |v: Vec<FunId>| -> Vec<Target> { v.into_iter().map(Target::Fun).collect() };
        match callee {
            Callee::Direct(f) => vec![Target::Fun(f)],
            Callee::Opaque => ext(),
            Callee::Name(n) => {
                // `super()` as a receiver and Solidity type conversions `Token(addr)` are not calls.
                if (lang == Language::Python && n == "super")
                    || (lang == Language::Solidity
                        && self.resolve_class(&n, ctx, depth + 1).is_some())
                {
                    return Vec::new();
                }
                if lang == Language::Python {
                    if let Some(Ty::Class(c)) = self.python_receiver(&n, ctx) {
                        return self.ctor_targets(c, &args, ctx);
                    }
                }
                let found = self.resolve_name(&n, &args, ctx, depth + 1);
                if found.is_empty() {
                    vec![Target::External(n)]
                } else {
                    found
                }
            }
            Callee::Super(n) => {
                let Some(c) = ctx.class else { return ext() };
                let ms = self.lookup_method(c, &n, true);
                let ms = self.select(ms, &args, ctx, 0);
                if ms.is_empty() {
                    ext()
                } else {
                    funs(ms)
                }
            }
            Callee::SuperCtor => {
                let Some(c) = ctx.class else { return ext() };
                let Some(&base) = self.bases.get(c).and_then(|b| {
                    b.iter().find(|&&k| {
                        // Java: the superclass, not an interface.
                        self.class(k)
                            .is_some_and(|x| lang != Language::Java || !self.is_interface(x))
                    })
                }) else {
                    return vec![Target::External("super".into())];
                };
                let cs = self.select(self.ctors(base), &args, ctx, 0);
                if cs.is_empty() {
                    vec![Target::External(
                        self.class(base)
                            .map(|b| b.simple.clone())
                            .unwrap_or_default(),
                    )]
                } else {
                    funs(cs)
                }
            }
            Callee::ThisCtor => {
                let Some(c) = ctx.class else { return ext() };
                let cs: Vec<FunId> = self
                    .ctors(c)
                    .into_iter()
                    .filter(|&f| Some(f) != ctx.fun)
                    .collect();
                let cs = self.select(cs, &args, ctx, 0);
                if cs.is_empty() {
                    vec![Target::External("this".into())]
                } else {
                    funs(cs)
                }
            }
            Callee::New(t) => {
                let written = file.node_text(t);
                match self.resolve_class(written, ctx, depth + 1) {
                    Some(c) => {
                        let cs = self.select(self.ctors(c), &args, ctx, 0);
                        if cs.is_empty() {
                            vec![Target::External(
                                self.class(c).map(|x| x.simple.clone()).unwrap_or_default(),
                            )]
                        } else {
                            funs(cs)
                        }
                    }
                    None => vec![Target::External(
                        norm_type(written, lang).unwrap_or_else(|| short_text(file, t)),
                    )],
                }
            }
            Callee::Member { recv, name } => {
                let ty = self.type_of(recv, ctx, depth + 1);
                let found = match &ty {
                    Some(Ty::Inst(c)) | Some(Ty::Class(c)) => {
                        let ms = self.lookup_method(*c, &name, false);
                        if ms.is_empty() && matches!(ty, Some(Ty::Class(_))) {
                            // `mod.Outer.Inner(...)` / `Cls.Nested(...)`: a nested class.
                            match self.member_type(
                                ty.as_ref().unwrap_or(&Ty::Class(*c)),
                                &name,
                                ctx,
                                depth + 1,
                            ) {
                                Some(Ty::Class(n)) => self.ctor_targets(n, &args, ctx),
                                _ => Vec::new(),
                            }
                        } else {
                            funs(self.select(ms, &args, ctx, 0))
                        }
                    }
                    Some(Ty::Module(_)) | Some(Ty::Unit(_)) => {
                        let u = match &ty {
                            Some(Ty::Module(m)) => self.find_module(m, ctx.unit),
                            Some(Ty::Unit(u)) => Some(*u),
                            _ => None,
                        };
                        match u {
                            Some(u) => self
                                .unit_symbol(u, &name, &args, ctx, depth + 1)
                                .unwrap_or_default(),
                            None => Vec::new(),
                        }
                    }
                    None => {
                        if lang == Language::Solidity {
                            funs(self.using_for(&name, &args, ctx))
                        } else {
                            Vec::new()
                        }
                    }
                };
                if found.is_empty() {
                    ext()
                } else {
                    found
                }
            }
            Callee::Qualified(segs) => {
                let found = self.resolve_qualified(&segs, &args, ctx, depth + 1);
                if found.is_empty() {
                    ext()
                } else {
                    found
                }
            }
        }
    }

    fn is_interface(&self, c: &Class<'t>) -> bool {
        c.is_interface
    }

    fn ctor_targets(&self, c: ClassId, args: &[Node<'t>], ctx: Ctx) -> Vec<Target> {
        let cs = self.select(self.ctors(c), args, ctx, 0);
        if cs.is_empty() {
            vec![Target::External(
                self.class(c).map(|x| x.simple.clone()).unwrap_or_default(),
            )]
        } else {
            cs.into_iter().map(Target::Fun).collect()
        }
    }

    fn last_def(&self, fs: &[FunId]) -> Option<FunId> {
        fs.iter().copied().max_by_key(|&f| {
            self.ix
                .funs
                .get(f)
                .map(|x| (x.unit, x.f.node.start_byte()))
                .unwrap_or((0, 0))
        })
    }

    /// Solidity `using L for T`: `x.f(args)` -> `L.f(x, args)`.
    fn using_for(&self, name: &str, args: &[Node<'t>], ctx: Ctx) -> Vec<FunId> {
        let mut libs: Vec<String> = Vec::new();
        if let Some(c) = ctx.class {
            for k in self.mro(c) {
                if let Some(cls) = self.class(k) {
                    libs.extend(cls.usings.iter().cloned());
                }
            }
        }
        if let Some(u) = self.ix.units.get(ctx.unit) {
            libs.extend(u.info.usings.iter().cloned());
        }
        let mut out = Vec::new();
        for l in libs {
            if let Some(c) = self.resolve_class(&l, ctx, 0) {
                out.extend(self.lookup_method(c, name, false));
            }
        }
        out.sort();
        out.dedup();
        self.select(out, args, ctx, 1)
    }

    /// A bare-name call `n(args)`.
    fn resolve_name(&self, n: &str, args: &[Node<'t>], ctx: Ctx, depth: usize) -> Vec<Target> {
        let lang = self.lang(ctx.unit);
        let funs = |v: Vec<FunId>| -> Vec<Target> { v.into_iter().map(Target::Fun).collect() };
        // 1. Nested functions of the enclosing chain; locals and parameters shadow outer names
        //    (except in Java, where methods and variables live in separate namespaces).
        for s in self.chain(ctx.fun) {
            if let Some(kids) = self.ix.children.get(&Some(s)) {
                let named: Vec<FunId> = kids
                    .iter()
                    .copied()
                    .filter(|&k| {
                        self.ix.funs.get(k).is_some_and(|f| {
                            f.f.kind == FunctionKind::Function && f.f.simple_name == n
                        })
                    })
                    .collect();
                if let Some(last) = self.last_def(&named) {
                    return vec![Target::Fun(last)];
                }
            }
            if lang == Language::Java {
                continue;
            }
            let Some(fun) = self.ix.funs.get(s) else {
                continue;
            };
            if let Some(facts) = self.ix.locals.get(&(s, n.to_string())) {
                // A lambda bound to the name is that (defined) function; anything else is a value.
                let lambdas: Vec<FunId> = facts
                    .iter()
                    .filter_map(|f| match f {
                        Fact::Value(v) => fun_at(self.ix, *v),
                        _ => None,
                    })
                    .collect();
                if lambdas.is_empty() && matches!(lang, Language::C | Language::Cpp) {
                    return self.c_function_pointer(facts, args, ctx, depth);
                }
                let values = facts
                    .iter()
                    .filter(|f| matches!(f, Fact::Value(_) | Fact::Opaque))
                    .count();
                return match (lambdas.as_slice(), values) {
                    ([one], 1) => vec![Target::Fun(*one)],
                    _ => Vec::new(),
                };
            }
            if fun.params.iter().any(|(p, _)| p == n) {
                return Vec::new();
            }
        }
        // 2. Members of the enclosing class and its bases (implicit `this`), then outer classes.
        if matches!(lang, Language::Java | Language::Cpp | Language::Solidity) {
            let mut cur = ctx.class;
            let mut guard = 0;
            while let Some(c) = cur {
                guard += 1;
                if guard > 64 {
                    break;
                }
                let ms = self.lookup_method(c, n, false);
                if !ms.is_empty() {
                    let sel = self.select(ms, args, ctx, 0);
                    if !sel.is_empty() || lang != Language::Java {
                        return funs(sel);
                    }
                }
                cur = if lang == Language::Solidity {
                    None
                } else {
                    self.class(c).and_then(|x| x.outer)
                };
            }
        }
        match lang {
            Language::Python | Language::JavaScript | Language::TypeScript => {
                self.resolve_name_module(n, args, ctx, depth)
            }
            Language::Java => {
                let unit = match self.ix.units.get(ctx.unit) {
                    Some(u) => u,
                    None => return Vec::new(),
                };
                if let Some(Import::JavaStatic { class, member }) = unit.info.imports.get(n) {
                    if let Some(c) = self.resolve_class(class, ctx, depth + 1) {
                        return funs(self.select(
                            self.lookup_method(c, member, false),
                            args,
                            ctx,
                            0,
                        ));
                    }
                }
                for class in &unit.info.static_star_imports {
                    if let Some(c) = self.resolve_class(class, ctx, depth + 1) {
                        let ms = self.select(self.lookup_method(c, n, false), args, ctx, 0);
                        if !ms.is_empty() {
                            return funs(ms);
                        }
                    }
                }
                Vec::new()
            }
            Language::C => self.resolve_c_function(n, ctx),
            Language::Cpp => self.resolve_qualified(&[n.to_string()], args, ctx, depth + 1),
            Language::Solidity => {
                let mut fs = self.top_funs(ctx.unit, n);
                if fs.is_empty() {
                    fs = (0..self.ix.units.len())
                        .filter(|&u| u != ctx.unit && self.lang(u) == Language::Solidity)
                        .flat_map(|u| self.top_funs(u, n))
                        .collect();
                }
                funs(self.select(fs, args, ctx, 0))
            }
        }
    }

    /// C/C++: a call through a local function pointer calls every function the pointer is
    /// given (`void (*fp)(char *) = f;`, `fp = &g;`); nothing when any value is not a
    /// function name (a parameter, a table lookup) or the local is not a pointer at all.
    fn c_function_pointer(
        &self,
        facts: &[Fact<'t>],
        args: &[Node<'t>],
        ctx: Ctx,
        depth: usize,
    ) -> Vec<Target> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return Vec::new();
        }
        let file = self.file(ctx.unit);
        let mut out: Vec<Target> = Vec::new();
        let mut values = 0;
        for f in facts {
            match f {
                Fact::Value(v) => {
                    values += 1;
                    let mut v = *v;
                    if v.kind() == kind::POINTER_EXPRESSION {
                        match v.child_by_field_name(field::ARGUMENT) {
                            Some(a) => v = a,
                            None => return Vec::new(),
                        }
                    }
                    if v.kind() != kind::IDENTIFIER {
                        return Vec::new();
                    }
                    let name = file.node_text(v);
                    // Another local pointer is followed the same way, up to the depth bound.
                    for t in self.resolve_name(name, args, ctx, depth + 1) {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
                Fact::Opaque => return Vec::new(),
                _ => {}
            }
        }
        if values == 0 {
            return Vec::new();
        }
        out
    }

    /// Python/JS: module-level functions, classes, aliases, then imports.
    fn resolve_name_module(
        &self,
        n: &str,
        args: &[Node<'t>],
        ctx: Ctx,
        depth: usize,
    ) -> Vec<Target> {
        // Classes nested in enclosing functions first (`def f(): class C: ...; C()`).
        if let Some(c) = self.resolve_class(n, ctx, depth + 1) {
            if self.top_funs(ctx.unit, n).is_empty() {
                return self.ctor_targets(c, args, ctx);
            }
        }
        self.unit_symbol(ctx.unit, n, args, ctx, depth + 1)
            .unwrap_or_default()
    }

    /// What a module-level name of unit `u` calls: a top-level function (the last definition),
    /// a class (its constructor), a module-level alias or lambda, or — following re-exports —
    /// an imported symbol. `Some(vec![])` when the name is bound to something else.
    fn unit_symbol(
        &self,
        u: usize,
        n: &str,
        args: &[Node<'t>],
        ctx: Ctx,
        depth: usize,
    ) -> Option<Vec<Target>> {
        if depth > MAX_DEPTH || !self.tick() {
            self.degraded.set(true);
            return None;
        }
        if let Some(last) = self.last_def(&self.top_funs(u, n)) {
            return Some(vec![Target::Fun(last)]);
        }
        if let Some(c) = self.top_class(u, n) {
            return Some(self.ctor_targets(c, args, ctx));
        }
        let unit = self.ix.units.get(u)?;
        if let Some(facts) = unit.info.module_vars.get(n) {
            // `square = lambda x: ...` or `alias = func` at module level.
            if let [Fact::Value(v)] = facts.as_slice() {
                if let Some(f) = fun_at(self.ix, *v) {
                    return Some(vec![Target::Fun(f)]);
                }
                let v = unwrap_expr(*v);
                if v.kind() == kind::IDENTIFIER {
                    let target = self.file(u).node_text(v);
                    if target != n {
                        if let Some(last) = self.last_def(&self.top_funs(u, target)) {
                            return Some(vec![Target::Fun(last)]);
                        }
                    }
                }
            }
            return Some(Vec::new());
        }
        if let Some(imp) = unit.info.imports.get(n) {
            if let Import::Symbol { module, name } = imp {
                let target = self.find_module(module, u)?;
                if name == "default" && self.lang(u) != Language::Python {
                    return Some(self.default_export(target).into_iter().collect());
                }
                return self.unit_symbol(target, name, args, ctx, depth + 1);
            }
            return Some(Vec::new());
        }
        for m in &unit.info.star_imports {
            if let Some(t) = self.find_module(m, u) {
                if t != u {
                    if let Some(found) = self.unit_symbol(t, n, args, ctx, depth + 1) {
                        return Some(found);
                    }
                }
            }
        }
        None
    }

    /// C: same file first, then a unique non-static definition elsewhere (preferring files
    /// whose name matches an included header).
    fn resolve_c_function(&self, n: &str, ctx: Ctx) -> Vec<Target> {
        let Some(all) = self.ix.by_key.get(n) else {
            return Vec::new();
        };
        let local: Vec<FunId> = all
            .iter()
            .copied()
            .filter(|&f| self.ix.funs.get(f).is_some_and(|x| x.unit == ctx.unit))
            .collect();
        if let Some(&f) = local.first() {
            return vec![Target::Fun(f)];
        }
        let other: Vec<FunId> = all
            .iter()
            .copied()
            .filter(|&f| {
                self.ix.funs.get(f).is_some_and(|x| {
                    !x.file_local
                        && matches!(self.lang(x.unit), Language::C | Language::Cpp)
                        && x.f.body.is_some()
                })
            })
            .collect();
        if let [one] = other.as_slice() {
            return vec![Target::Fun(*one)];
        }
        let includes = self
            .ix
            .units
            .get(ctx.unit)
            .map(|u| u.info.includes.clone())
            .unwrap_or_default();
        let stems: Vec<String> = includes.iter().map(|i| stem(i)).collect();
        let by_header: Vec<FunId> = other
            .iter()
            .copied()
            .filter(|&f| {
                self.ix
                    .funs
                    .get(f)
                    .and_then(|x| self.ix.units.get(x.unit))
                    .is_some_and(|u| stems.contains(&stem(&u.path)))
            })
            .collect();
        match by_header.as_slice() {
            [one] => vec![Target::Fun(*one)],
            _ => Vec::new(),
        }
    }

    /// C++: `a::b::f(args)` or bare `f(args)` through namespaces, `using`, classes.
    fn resolve_qualified(
        &self,
        segs: &[String],
        args: &[Node<'t>],
        ctx: Ctx,
        depth: usize,
    ) -> Vec<Target> {
        let funs = |v: Vec<FunId>| -> Vec<Target> { v.into_iter().map(Target::Fun).collect() };
        let Some((last, prefix)) = segs.split_last() else {
            return Vec::new();
        };
        let global = prefix.first().is_some_and(|s| s.is_empty());
        let prefix: Vec<&str> = prefix
            .iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        let qual = prefix.join("::");
        // `Cls::m(...)`, `Base::m(...)`, `Cls::Cls(...)`.
        if !qual.is_empty() {
            if let Some(c) = self.resolve_class(&qual, ctx, depth + 1) {
                if self.class(c).is_some_and(|x| &x.simple == last) {
                    return self.ctor_targets(c, args, ctx);
                }
                let ms = self.select(self.lookup_method(c, last, false), args, ctx, 0);
                return funs(ms);
            }
        }
        let name = if qual.is_empty() {
            last.clone()
        } else {
            format!("{qual}::{last}")
        };
        let unit = self.ix.units.get(ctx.unit);
        let mut scopes: Vec<String> = if global {
            vec![String::new()]
        } else {
            self.ns_chain(ctx)
        };
        if !global {
            if let Some(u) = unit {
                if let Some(full) = u.info.using_decls.get(&name) {
                    scopes.push(String::new());
                    let found = self.funs_by_key(full, ctx);
                    if !found.is_empty() {
                        return funs(self.select(found, args, ctx, 0));
                    }
                }
                scopes.extend(u.info.using_namespaces.iter().cloned());
            }
        }
        for p in scopes {
            let key = if p.is_empty() {
                name.clone()
            } else {
                format!("{p}::{name}")
            };
            let found = self.funs_by_key(&key, ctx);
            if !found.is_empty() {
                return funs(self.select(found, args, ctx, 0));
            }
            if let Some(c) = self.class_q(&key, ctx) {
                return self.ctor_targets(c, args, ctx);
            }
        }
        Vec::new()
    }

    /// Functions with a canonical key, visible from the context's file.
    fn funs_by_key(&self, key: &str, ctx: Ctx) -> Vec<FunId> {
        let Some(all) = self.ix.by_key.get(key) else {
            return Vec::new();
        };
        let visible: Vec<FunId> = all
            .iter()
            .copied()
            .filter(|&f| {
                self.ix.funs.get(f).is_some_and(|x| {
                    (!x.file_local || x.unit == ctx.unit) && x.f.kind != FunctionKind::Lambda
                })
            })
            .collect();
        // Several files defining the same signature (e.g. inline header bodies): the caller's file wins.
        let local: Vec<FunId> = visible
            .iter()
            .copied()
            .filter(|&f| self.ix.funs.get(f).is_some_and(|x| x.unit == ctx.unit))
            .collect();
        if !local.is_empty() {
            let mut rest: Vec<FunId> = visible
                .iter()
                .copied()
                .filter(|f| !local.contains(f))
                .filter(|&f| {
                    let sig = self.ix.funs.get(f).map(|x| x.f.signature.clone());
                    !local
                        .iter()
                        .any(|&l| self.ix.funs.get(l).map(|x| x.f.signature.clone()) == sig)
                })
                .collect();
            let mut out = local;
            out.append(&mut rest);
            return out;
        }
        visible
    }

    // ----- overloads ----------------------------------------------------------------------------

    /// The overload key of an argument: literal categories, declared types of Java,
    /// Solidity and TypeScript locals/parameters, and `new T(..)`. `None` when unknown (C/C++
    /// variables are not typed here: their pointer-ness lives in the declarator).
    fn arg_category(&self, node: Node<'t>, ctx: Ctx) -> Option<String> {
        let node = unwrap_expr(node);
        let file = self.file(ctx.unit);
        let lang = self.lang(ctx.unit);
        let t = file.node_text(node);
        let cat = match node.kind() {
            kind::DECIMAL_INTEGER_LITERAL
            | kind::HEX_INTEGER_LITERAL
            | kind::OCTAL_INTEGER_LITERAL
            | kind::BINARY_INTEGER_LITERAL
            | kind::INTEGER => "int",
            kind::NUMBER_LITERAL | kind::NUMBER => {
                if t.contains('.') || (t.contains(['e', 'E']) && !t.starts_with("0x")) {
                    "float"
                } else {
                    "int"
                }
            }
            kind::DECIMAL_FLOATING_POINT_LITERAL
            | kind::HEX_FLOATING_POINT_LITERAL
            | kind::FLOAT => "float",
            kind::STRING_LITERAL
            | kind::STRING
            | kind::RAW_STRING_LITERAL
            | kind::CONCATENATED_STRING
            | kind::TEMPLATE_STRING => "string",
            kind::CHARACTER_LITERAL | kind::CHAR_LITERAL => "char",
            kind::TRUE | kind::FALSE | kind::BOOLEAN_LITERAL => "bool",
            k if Self::is_null(k) => "null",
            kind::IDENTIFIER
                if matches!(
                    lang,
                    Language::Java | Language::Solidity | Language::TypeScript
                ) =>
            {
                for s in self.chain(ctx.fun) {
                    let fun = self.ix.funs.get(s)?;
                    if let Some((_, ty)) = fun.params.iter().find(|(n, _)| n == t) {
                        let tf = self.file(fun.unit);
                        return ty.and_then(|x| overload_key(tf.node_text(x), lang));
                    }
                    if let Some(facts) = self.ix.locals.get(&(s, t.to_string())) {
                        return facts.iter().find_map(|f| match f {
                            Fact::Declared(d) => overload_key(file.node_text(*d), lang),
                            _ => None,
                        });
                    }
                }
                return None;
            }
            kind::CAST_EXPRESSION if lang == Language::Java => {
                let ty = node.child_by_field_name(field::TYPE)?;
                return overload_key(file.node_text(ty), lang);
            }
            kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION => {
                let ty = node
                    .child_by_field_name(field::TYPE)
                    .or_else(|| node.child_by_field_name(field::CONSTRUCTOR))?;
                if node.child_by_field_name(field::DIMENSIONS).is_some() || t.contains('[') {
                    return None;
                }
                return type_name(file, ty).map(|x| type_category(&x));
            }
            _ => return None,
        };
        Some(cat.to_string())
    }

    /// Overload selection: by argument count, then by simple argument types; several
    /// remaining candidates are all kept. Python/JS redefinitions: the last one wins.
    fn select(&self, cands: Vec<FunId>, args: &[Node<'t>], ctx: Ctx, extra: usize) -> Vec<FunId> {
        let lang = self.lang(ctx.unit);
        match lang {
            Language::Python | Language::JavaScript | Language::TypeScript => {
                return self.last_def(&cands).into_iter().collect();
            }
            Language::C => return cands,
            _ => {}
        }
        let n = args.len() + extra;
        let fits = |f: FunId, strict: bool| {
            self.ix.funs.get(f).is_some_and(|x| {
                (!strict || x.min_arity <= n) && x.max_arity.is_none_or(|m| n <= m)
            })
        };
        let mut out: Vec<FunId> = cands.iter().copied().filter(|&f| fits(f, true)).collect();
        if out.is_empty() && lang == Language::Cpp {
            // Default arguments may live on a declaration we did not see.
            out = cands.iter().copied().filter(|&f| fits(f, false)).collect();
        }
        if out.len() <= 1 {
            return out;
        }
        let cats: Vec<Option<String>> = args.iter().map(|a| self.arg_category(*a, ctx)).collect();
        let mut scored: Vec<(u32, FunId)> = Vec::new();
        for &f in &out {
            let Some(fun) = self.ix.funs.get(f) else {
                continue;
            };
            let mut score = 0u32;
            let mut ok = true;
            for (i, cat) in cats.iter().enumerate() {
                let Some(cat) = cat else { continue };
                let Some(Some(pk)) = fun.param_keys.get(i + extra) else {
                    continue;
                };
                match compatible(cat, pk) {
                    Some(s) => score += s,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                scored.push((score, f));
            }
        }
        let Some(best) = scored.iter().map(|s| s.0).max() else {
            return out;
        };
        scored
            .into_iter()
            .filter(|s| s.0 == best)
            .map(|s| s.1)
            .collect()
    }

    // ----- sites -------------------------------------------------------------------------------

    /// Resolves one call site to its targets, each with the 1-based line of the call.
    pub fn resolve_site(&self, site: &Site<'t>) -> Vec<(Target, usize)> {
        self.fuel.set(FUEL_PER_SITE);
        let ctx = self.ctx_of(site.fun);
        let file = self.file(ctx.unit);
        let line = file.line_of(site.node.start_byte());
        let at_line = |ts: Vec<Target>| ts.into_iter().map(|t| (t, line)).collect::<Vec<_>>();
        match site.kind {
            SiteKind::Call | SiteKind::New | SiteKind::ExplicitCtor => {
                at_line(self.resolve_call(site.node, ctx, 0))
            }
            SiteKind::Decl => self.resolve_decl(site.node, ctx),
            SiteKind::FieldInit => at_line(self.resolve_field_init(site.node, ctx)),
            SiteKind::Modifier => at_line(self.resolve_modifier(site.node, ctx)),
            SiteKind::BaseSpec => {
                let Some(anc) = site.node.child_by_field_name(field::ANCESTOR) else {
                    return Vec::new();
                };
                let args: Vec<Node<'t>> = named_children(site.node)
                    .into_iter()
                    .filter(|c| c.kind() == kind::CALL_ARGUMENT)
                    .collect();
                match self.resolve_class(file.node_text(anc), ctx, 0) {
                    Some(c) => at_line(self.ctor_targets(c, &args, ctx)),
                    None => at_line(vec![Target::External(short_text(file, anc))]),
                }
            }
        }
    }

    /// C++ `Foo x(args);`, `Foo x{args};`, `Foo x;` (default constructor only when defined).
    fn resolve_decl(&self, node: Node<'t>, ctx: Ctx) -> Vec<(Target, usize)> {
        let file = self.file(ctx.unit);
        let Some(ty) = node.child_by_field_name(field::TYPE) else {
            return Vec::new();
        };
        let class = self.resolve_class(file.node_text(ty), ctx, 0);
        let mut out = Vec::new();
        let mut cursor = node.walk();
        let decls: Vec<Node<'t>> = node
            .children_by_field_name(field::DECLARATOR, &mut cursor)
            .collect();
        for d in decls {
            let line = file.line_of(d.start_byte());
            let (args, explicit) = match d.kind() {
                kind::IDENTIFIER => (Vec::new(), false),
                kind::INIT_DECLARATOR => {
                    let Some(v) = d.child_by_field_name(field::VALUE) else {
                        continue;
                    };
                    let is_obj = d
                        .child_by_field_name(field::DECLARATOR)
                        .is_some_and(|x| x.kind() == kind::IDENTIFIER);
                    match v.kind() {
                        kind::ARGUMENT_LIST | kind::INITIALIZER_LIST if is_obj => {
                            (named_children(v), v.kind() == kind::ARGUMENT_LIST)
                        }
                        _ => continue,
                    }
                }
                _ => continue,
            };
            match class {
                Some(c) => {
                    let cs = self.select(self.ctors(c), &args, ctx, 0);
                    if cs.is_empty() {
                        if explicit {
                            out.push((
                                Target::External(
                                    self.class(c).map(|x| x.simple.clone()).unwrap_or_default(),
                                ),
                                line,
                            ));
                        }
                    } else {
                        out.extend(cs.into_iter().map(|f| (Target::Fun(f), line)));
                    }
                }
                None if explicit
                    && !matches!(ty.kind(), kind::PRIMITIVE_TYPE | kind::SIZED_TYPE_SPECIFIER) =>
                {
                    if let Some(n) = norm_type(file.node_text(ty), Language::Cpp) {
                        out.push((Target::External(n), line));
                    }
                }
                None => {}
            }
        }
        out
    }

    /// C++ `: Base(x), member(y)` in a constructor.
    fn resolve_field_init(&self, node: Node<'t>, ctx: Ctx) -> Vec<Target> {
        let file = self.file(ctx.unit);
        let kids = named_children(node);
        let Some(name_node) = kids.first() else {
            return Vec::new();
        };
        let args = kids
            .iter()
            .find(|k| matches!(k.kind(), kind::ARGUMENT_LIST | kind::INITIALIZER_LIST))
            .map(|a| named_children(*a))
            .unwrap_or_default();
        let name = file.node_text(*name_node);
        let Some(c) = ctx.class.or_else(|| {
            ctx.fun
                .and_then(|f| self.ix.funs.get(f))
                .and_then(|f| f.class)
        }) else {
            return Vec::new();
        };
        // A delegating constructor `Foo() : Foo(0) {}`?
        if self
            .class(c)
            .is_some_and(|x| x.simple == strip_template(name))
        {
            let cs: Vec<FunId> = self
                .ctors(c)
                .into_iter()
                .filter(|&f| Some(f) != ctx.fun)
                .collect();
            return self
                .select(cs, &args, ctx, 0)
                .into_iter()
                .map(Target::Fun)
                .collect();
        }
        // A base class?
        if let Some(b) = self.bases.get(c).and_then(|bs| {
            bs.iter().copied().find(|&b| {
                self.class(b).is_some_and(|x| {
                    let written = strip_template(name);
                    x.simple == written.rsplit("::").next().unwrap_or(written) || x.qname == written
                })
            })
        }) {
            return self.ctor_targets(b, &args, ctx);
        }
        // A member of class type.
        match self.field_type(c, name, 0) {
            Some(Ty::Inst(fc)) => {
                let cs = self.select(self.ctors(fc), &args, ctx, 0);
                cs.into_iter().map(Target::Fun).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Solidity modifier invocation (or base constructor call in a constructor header).
    fn resolve_modifier(&self, node: Node<'t>, ctx: Ctx) -> Vec<Target> {
        let file = self.file(ctx.unit);
        let kids = named_children(node);
        let Some(name_node) = kids.first() else {
            return Vec::new();
        };
        let name = file.node_text(*name_node).to_string();
        let args: Vec<Node<'t>> = kids
            .iter()
            .copied()
            .filter(|k| k.kind() == kind::CALL_ARGUMENT)
            .collect();
        if let Some(c) = ctx.class {
            let ms = self.lookup_method(c, &name, false);
            if !ms.is_empty() {
                return self
                    .select(ms, &args, ctx, 0)
                    .into_iter()
                    .map(Target::Fun)
                    .collect();
            }
        }
        match self.resolve_class(&name, ctx, 0) {
            Some(c) => self.ctor_targets(c, &args, ctx),
            None => vec![Target::External(name)],
        }
    }
}

fn stem(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match file.rfind('.') {
        Some(i) if i > 0 => file.get(..i).unwrap_or(file).to_string(),
        _ => file.to_string(),
    }
}
