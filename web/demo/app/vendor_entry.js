// The npm libraries the demo uses, bundled into demo/build/vendor.js by demo/build.mjs (the page
// loads nothing from a CDN): marked renders replies as markdown, DOMPurify sanitises the HTML.
export { marked } from 'marked';
export { default as DOMPurify } from 'dompurify';
