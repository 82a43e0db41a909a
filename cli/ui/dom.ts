/** Attributes of an element: strings and numbers become attributes, functions `on…` listeners. */
export type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;
export type Child = Node | string | number | null | undefined | false | Child[];

/** Creates an element; text is always a text node, so nothing from the cluster is parsed as HTML. */
export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element, as `h` does. */
export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== undefined && v !== false) el.setAttribute(k, String(v));
  }
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** A state badge: the word and a colour, never the colour alone. */
export function badge(state: string): HTMLElement {
  return h('span', { class: `state state-${state}` }, state);
}

/** The hash of an object page. */
export function objectHref(kind: string, namespace: string, name: string): string {
  return `#/object/${encodeURIComponent(kind)}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}
